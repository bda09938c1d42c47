//go:build linux

package sched

import (
	"github.com/diskio-go/diskio/internal/sys"
)

// viaLoop hands r to the loop and waits until it is done.
func (s *Scheduler) viaLoop(r *request) {
	s.send(r)
	s.await(r)
}

// await waits for the loop to be done with r.
func (s *Scheduler) await(r *request) {
	r.waiting.Store(true)
	<-r.wake
	s.passRelay(r)
	s.active.Add(-1)
}

// send hands r to the loop.
func (s *Scheduler) send(r *request) { s.push(r, r, 1) }

// push puts a chain of n requests (head newest, tail oldest, linked by
// next) on the incoming stack, and wakes the loop only if it announced
// that it sleeps (the producer side of the sleep handshake).
func (s *Scheduler) push(head, tail *request, n int) {
	s.active.Add(int64(n))
	for {
		old := s.incoming.Load()
		tail.next = old
		if s.incoming.CompareAndSwap(old, head) {
			break
		}
	}
	if s.sleeping.Load() && s.sleeping.CompareAndSwap(true, false) {
		s.wakeLoop()
	}
}

// control sends a request that the loop handles itself.
func (s *Scheduler) control(r *request) (int, error) {
	if !s.acquire() {
		putRequest(r)
		return 0, ErrClosed
	}
	s.viaLoop(r)
	err := r.err
	putRequest(r)
	s.release()
	return 0, err
}

// acquire registers a caller; it fails once Close has begun.
func (s *Scheduler) acquire() bool {
	if s.state.Add(1)&stateClosed != 0 {
		s.release()
		return false
	}
	return true
}

func (s *Scheduler) release() { s.releaseN(1) }

// releaseN is n releases at once.
func (s *Scheduler) releaseN(n int) {
	if s.state.Add(-uint64(n)) == stateClosed {
		// Last caller out after Close: let the loop see it.
		s.wakeLoop()
	}
}

func (s *Scheduler) wakeLoop() {
	// A caller arriving after Close may still get here: the eventfd
	// must not be written once closed (its number may be reused).
	s.efdMu.RLock()
	defer s.efdMu.RUnlock()
	if !s.efdOpen {
		return
	}
	var one = [8]byte{1}
	var start int64
	if s.tracer != nil {
		start = Now()
	}
	// A raw system call: an eventfd write never blocks (the counter
	// would have to reach 2^64-2), but it wakes the loop's thread, and on
	// a busy machine the kernel may run that thread first and put this
	// one aside. An ordinary system call would let the runtime take the
	// P meanwhile and start another thread to run it (it did, in
	// contrib/pebblevfs's YCSB runs: docs/notes/2026-11-28-design-figures.md);
	// a raw one keeps the P with its caller.
	sys.RawWrite(s.efd, one[:])
	if s.tracer != nil {
		s.tracer.SyscallDone(SyscallEvent{Call: SysEventfdWrite, Start: start, End: Now()})
	}
}
