//go:build linux

package trace

import (
	"sync/atomic"
	"unsafe"

	"github.com/diskio-go/diskio/sched"
)

// maxDepth is the deepest caller stack kept per sample.
const maxDepth = 32

// maxProbe bounds the slots a sample looks at before it is dropped (and
// counted): the table is nearly full of other stacks.
const maxProbe = 64

// A stackTable aggregates sampled caller stacks in place: one entry per
// distinct (op, size class, stack), holding the number of samples and
// their summed wait. However long the run, it holds every sample whose
// stack found an entry, in fixed memory; a sample whose stack is new when
// the table is full is dropped and counted. Writers take no lock: a new
// stack claims an empty entry with a compare-and-swap of its hash word,
// fills the key and marks it ready; samples of a known stack add to its
// counters. Two writers racing to insert the same new stack may make two
// entries for it; the profile sums them.
type stackTable struct {
	samples atomic.Uint64 // samples taken
	_       [56]byte
	lost    atomic.Uint64 // samples dropped: no entry found within maxProbe
	mask    uint64
	entries []stackEntry
}

// stackEntry is one distinct stack. hash is 0 while empty; key, depth and
// pcs are written once, by the writer that claimed it, before ready.
type stackEntry struct {
	hash  atomic.Uint64
	ready atomic.Bool
	key   uint64 // op | size class << 8
	depth int
	pcs   [maxDepth]uintptr
	count atomic.Uint64
	wait  atomic.Uint64 // ns, summed
}

// stackEntryBytes is an entry's size, for the summary's memory figures.
const stackEntryBytes = int(unsafe.Sizeof(stackEntry{}))

func newStackTable(size int) *stackTable {
	n := 1
	for n < size {
		n <<= 1
	}
	return &stackTable{mask: uint64(n - 1), entries: make([]stackEntry, n)}
}

func stackKey(op sched.Op, n int) uint64 { return uint64(op) | uint64(sizeCode(n))<<8 }

// add counts one sample of wait ns on the stack pcs.
func (t *stackTable) add(key uint64, pcs []uintptr, wait uint64) {
	t.samples.Add(1)
	h := key*0x9e3779b97f4a7c15 + uint64(len(pcs))
	for _, pc := range pcs {
		h = (h ^ uint64(pc)) * 0x100000001b3
	}
	h |= 1 // 0 means empty
	for i := uint64(0); i < maxProbe && i <= t.mask; i++ {
		e := &t.entries[(h+i)&t.mask]
		eh := e.hash.Load()
		if eh == 0 {
			if !e.hash.CompareAndSwap(0, h) {
				eh = e.hash.Load() // taken meanwhile: by the same stack?
			} else {
				e.key, e.depth = key, len(pcs)
				copy(e.pcs[:], pcs)
				e.count.Add(1)
				e.wait.Add(wait)
				e.ready.Store(true)
				return
			}
		}
		if eh == h && e.ready.Load() && e.key == key && e.depth == len(pcs) && [maxDepth]uintptr(e.pcs) == pcsArray(pcs) {
			e.count.Add(1)
			e.wait.Add(wait)
			return
		}
	}
	t.lost.Add(1)
}

func pcsArray(pcs []uintptr) (a [maxDepth]uintptr) {
	copy(a[:], pcs)
	return a
}

// stackCount is an entry's counters as a snapshot saw them.
type stackCount struct{ count, wait uint64 }

// load copies the ready entries' counters, indexed as entries.
func (t *stackTable) counts() []stackCount {
	c := make([]stackCount, len(t.entries))
	for i := range t.entries {
		e := &t.entries[i]
		if e.ready.Load() {
			c[i] = stackCount{e.count.Load(), e.wait.Load()}
		}
	}
	return c
}
