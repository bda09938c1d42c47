//go:build linux

package diskio

import (
	"sync"
	"unsafe"
)

// Alignment and aligned bounce buffers for O_DIRECT.

const maxBounce = 1 << 20

func (f *File) aligned(b []byte, off int64) bool {
	return off%f.block == 0 && int64(len(b))%f.block == 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(b)))%f.mem == 0
}

func (f *File) alignDown(off int64) int64 { return off - off%f.block }
func (f *File) alignUp(off int64) int64   { return f.alignDown(off + f.block - 1) }

// Bounce buffers come from the scheduler (so they are registered buffers
// where io_uring allows) and are kept for reuse, per scheduler and size.
type bouncePool struct {
	mu   sync.Mutex
	free map[int][][]byte
}

var bouncePools sync.Map // *sched.Scheduler -> *bouncePool

func (f *File) getBounce(n int) []byte {
	c := bounceClass(n)
	p := f.pool()
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	b, err := f.s.AllocBuffer(c)
	if err != nil {
		// Out of memory for buffers: nothing sensible is left to do.
		panic("diskio: allocating a bounce buffer: " + err.Error())
	}
	return b[:n]
}

// bounceClass rounds n up to a power of two of at least 4 KiB, so that
// spans of many lengths share a few pools.
func bounceClass(n int) int {
	c := 4096
	for c < n {
		c <<= 1
	}
	return c
}

// maxPooled caps the buffers kept per size; more are given back.
const maxPooled = 64

func (f *File) putBounce(b []byte) {
	c := bounceClass(len(b))
	b = b[:c] // getBounce allocated c bytes
	p := f.pool()
	p.mu.Lock()
	if len(p.free[c]) < maxPooled {
		p.free[c] = append(p.free[c], b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	f.s.FreeBuffer(b)
}

func (f *File) pool() *bouncePool {
	if p, ok := bouncePools.Load(f.s); ok {
		return p.(*bouncePool)
	}
	p, _ := bouncePools.LoadOrStore(f.s, &bouncePool{free: make(map[int][][]byte)})
	return p.(*bouncePool)
}
