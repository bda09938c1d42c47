//go:build linux

package sched

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/diskio-go/diskio/internal/mem"
)

// arena is the memory registered with the kernel as one fixed buffer:
// reads and writes into it use READ_FIXED/WRITE_FIXED, which skip pinning
// the pages on every request. It hands out power-of-two blocks of at least
// minBlock bytes (page aligned, so fit for O_DIRECT), keeps freed blocks on
// per-size free lists, and never coalesces: storage engines allocate a few
// block sizes over and over. When no block of the class is left, the
// page-rounded request comes from the unused end instead, so that an arena
// sized for one buffer holds it.
//
// The arena lives until the scheduler is closed and every block it handed
// out is back: close marks it closed (alloc then fails), and the last of
// close and the releases unmaps it. A block a caller still holds when the
// scheduler closes thus stays mapped, and usable, until it is freed.
type arena struct {
	mem        []byte
	base, end  uintptr // the mapping; both 0 once unmapped (see contains)
	mu         sync.Mutex
	next       int        // bump pointer for blocks never handed out
	free       [][]uint32 // per size class: offsets of free blocks
	isFree     []uint64   // bit per minBlock page: a free block starts there
	classOfOff map[uint32]uint8
	out        int  // blocks handed out and not released
	closed     bool // the scheduler closed: no more allocs
}

const minBlock = 4096

func newArena(size int) (*arena, error) {
	if size < minBlock {
		return nil, fmt.Errorf("sched: fixed buffer arena of %d bytes is smaller than one block (%d)", size, minBlock)
	}
	m, err := mem.Map(size)
	if err != nil {
		return nil, err
	}
	base := uintptr(unsafe.Pointer(&m[0]))
	return &arena{
		mem:        m,
		base:       base,
		end:        base + uintptr(size),
		free:       make([][]uint32, 32),
		isFree:     make([]uint64, (size/minBlock+63)/64),
		classOfOff: make(map[uint32]uint8),
	}, nil
}

// class returns the size class of n bytes: blocks of minBlock<<class.
func class(n int) uint8 {
	if n <= minBlock {
		return 0
	}
	return uint8(bits.Len(uint((n - 1) / minBlock)))
}

var (
	errArenaFull   = errors.New("sched: fixed buffer arena exhausted")
	errArenaClosed = errors.New("sched: fixed buffer arena closed")
)

func (a *arena) alloc(n int) ([]byte, error) {
	c := class(n)
	size := minBlock << c
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, errArenaClosed
	}
	if fl := a.free[c]; len(fl) > 0 {
		a.out++
		off := fl[len(fl)-1]
		a.free[c] = fl[:len(fl)-1]
		a.isFree[off/minBlock/64] &^= 1 << (off / minBlock % 64)
		b := a.mem[off : int(off)+size : int(off)+size]
		clear(b)
		return b[:n], nil
	}
	if a.next+size > len(a.mem) {
		// No block of the class fits, but n bytes may: an arena sized
		// for one large buffer must hold it. The block is filed
		// under the largest class it holds, which is how it is
		// reused once freed.
		size = (n + minBlock - 1) / minBlock * minBlock
		if a.next+size > len(a.mem) {
			return nil, errArenaFull
		}
		c = uint8(bits.Len(uint(size/minBlock)) - 1)
	}
	off := a.next
	a.next += size
	a.classOfOff[uint32(off)] = c
	a.out++
	return a.mem[off : off+n : off+size], nil
}

// contains reports whether b lies wholly inside the arena. It is for the
// loop, which runs only while the arena is mapped; release checks again
// under the lock.
func (a *arena) contains(b []byte) bool {
	if a == nil || len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= a.base && p+uintptr(len(b)) <= a.end
}

// release takes back the block b starts, if b lies in the arena (ours);
// the last block back after close unmaps the arena.
func (a *arena) release(b []byte) (ours bool, err error) {
	if a == nil {
		return false, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.contains(b[:1]) {
		return false, nil // unmapped since, or memory of its own mapping
	}
	off := uint32(uintptr(unsafe.Pointer(&b[0])) - a.base)
	c, ok := a.classOfOff[off]
	if !ok {
		return true, errors.New("sched: FreeBuffer of a slice that does not start a block")
	}
	// A bit per page, not a search of the free list: with thousands of
	// 4 KiB blocks out (ReadMany), a linear check made FreeBuffer O(n).
	w, bit := off/minBlock/64, uint64(1)<<(off/minBlock%64)
	if a.isFree[w]&bit != 0 {
		return true, errors.New("sched: FreeBuffer twice of the same block")
	}
	a.isFree[w] |= bit
	a.free[c] = append(a.free[c], off)
	a.out--
	if a.closed && a.out == 0 {
		return true, a.unmap()
	}
	return true, nil
}

// close ends allocation; the arena is unmapped now if no block is out,
// else when the last one is released. The kernel must hold no request
// that uses it (the ring is closed).
func (a *arena) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.out == 0 {
		return a.unmap()
	}
	return nil
}

// unmap gives the memory back; the caller holds a.mu.
func (a *arena) unmap() error {
	if a.mem == nil {
		return nil
	}
	err := mem.Unmap(a.mem)
	a.mem, a.base, a.end = nil, 0, 0
	return err
}

// mapped reports whether the arena's memory is still mapped.
func (a *arena) mapped() bool { return a.size() > 0 }

// size is the bytes mapped: 0 once unmapped.
func (a *arena) size() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.mem)
}
