//go:build linux

package sched

import (
	"errors"
)

// finishCall reports r to the tracer, returns its result and recycles it.
func (s *Scheduler) finishCall(r *request, inline bool) (int, error) {
	n, err := r.done, r.err
	if s.tracer != nil {
		s.traceRequest(r, inline)
	}
	detached := r.detached
	putRequest(r)
	if !detached {
		s.release()
	}
	return n, err
}

// Call is a request started with StartReadAt or StartWriteAt and not yet
// waited for: the way for one goroutine to keep many requests in flight
// without a goroutine per request. Wait must be called exactly once, and
// the buffer must stay untouched until then. A zero Call is not valid.
type Call struct {
	s      *Scheduler
	r      *request
	inline bool  // already done when started
	err    error // refused at start (ErrClosed)
}

// StartReadAt starts reading len(p) bytes at off from fd, like ReadAt,
// and returns without waiting. Requests started together are submitted
// together: starting many and then waiting for them is how a stream keeps
// the device busy.
func (s *Scheduler) StartReadAt(fd int, p []byte, off int64) Call {
	return s.begin(newTransfer(OpRead, nil, int32(fd), p, off))
}

// StartWriteAt starts writing all of p at off to fd, like WriteAt, and
// returns without waiting.
func (s *Scheduler) StartWriteAt(fd int, p []byte, off int64) Call {
	return s.begin(newTransfer(OpWrite, nil, int32(fd), p, off))
}

func (s *Scheduler) begin(r *request) Call {
	c, queue := s.admit(r)
	if queue {
		// Never the idle fast path: the caller wants to go on. Once
		// with the loop, the request keeps the loop (and Close) waiting
		// until it completes; the caller's reference need not wait for
		// its Wait, which may never come (a stream dropped).
		r.detached = true
		s.send(r)
		s.release()
	}
	return c
}

// admit starts a call on r; queue says r is for the loop (not refused,
// not already done on the blocking backend).
func (s *Scheduler) admit(r *request) (c Call, queue bool) {
	if !s.acquire() {
		putRequest(r)
		return Call{err: ErrClosed}, false
	}
	if s.tracer != nil {
		r.tEnqueue = Now()
	}
	if !r.classGiven && r.file != nil {
		r.class = Class(r.file.class.Load())
	}
	if s.backend == Blocking {
		// Nothing runs asynchronously here: do it now, as os.File
		// would, and let Wait return the result; a read or write in
		// a transfer slot (transfer_linux.go).
		if r.transfer() {
			s.runTransfer(r)
		} else {
			s.runInline(r)
		}
		return Call{s: s, r: r, inline: true}, false
	}
	return Call{s: s, r: r}, true
}

// Ready reports whether Wait would return without blocking.
func (c Call) Ready() bool {
	return c.r == nil || c.inline || len(c.r.wake) > 0
}

// Wait waits for the call to complete and returns what ReadAt or WriteAt
// would have.
func (c Call) Wait() (int, error) {
	if c.r == nil {
		if c.err == nil {
			return 0, errors.New("sched: Wait on a zero Call")
		}
		return 0, c.err
	}
	if !c.inline {
		c.s.await(c.r)
	}
	return c.s.finishCall(c.r, c.inline)
}
