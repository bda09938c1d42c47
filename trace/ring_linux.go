//go:build linux

package trace

import "sync/atomic"

// A ring is a fixed array of fixed-size slots that any number of goroutines
// write without locks, keeping the newest records. A writer takes a ticket
// from one counter; the ticket picks the slot (ticket mod size) and is the
// record's sequence number. Each slot has its own sequence word, which makes
// the slot the writer's alone while it writes and tells readers whether
// what they copied is whole:
//
//	0           never written
//	busy|t      writer of ticket t is filling it
//	t+1         holds the record of ticket t
//
// Every field is read and written atomically, so a reader may copy slots
// while writers fill them (a seqlock with atomic data words: on amd64 the
// loads are plain moves). A writer that finds its slot still busy with an
// older ticket (a writer stalled for a whole lap of the ring), or already
// holding a newer one, gives up its record and counts it as lost rather
// than wait or tear another record.
type ring struct {
	head  atomic.Uint64 // next ticket
	_     [56]byte      // keep writers' counter off the readers' lines
	lost  atomic.Uint64 // records given up (see above)
	mask  uint64
	slots []slot
}

const busy = 1 << 63

// slot is one record: a sequence word and seven data words, one cache line.
type slot struct {
	seq atomic.Uint64
	w   [7]atomic.Uint64
}

func newRing(size int) *ring {
	n := 1
	for n < size {
		n <<= 1
	}
	return &ring{mask: uint64(n - 1), slots: make([]slot, n)}
}

// claim takes the next ticket and its slot, or returns nil when the record
// must be given up. The caller fills the slot and calls publish.
func (r *ring) claim() (*slot, uint64) {
	t := r.head.Add(1) - 1
	s := &r.slots[t&r.mask]
	old := s.seq.Load()
	if old&busy != 0 || old > t || !s.seq.CompareAndSwap(old, busy|t) {
		r.lost.Add(1)
		return nil, t
	}
	return s, t
}

func (s *slot) publish(t uint64) { s.seq.Store(t + 1) }

// load copies slot i; ok is false if it is empty, being written, or was
// rewritten while it was copied.
func (r *ring) load(i uint64, w *[7]uint64) (ticket uint64, ok bool) {
	s := &r.slots[i]
	s1 := s.seq.Load()
	if s1 == 0 || s1&busy != 0 {
		return 0, false
	}
	for j := range w {
		w[j] = s.w[j].Load()
	}
	if s.seq.Load() != s1 {
		return 0, false
	}
	return s1 - 1, true
}
