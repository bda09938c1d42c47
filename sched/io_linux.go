//go:build linux

package sched

import "golang.org/x/sys/unix"

func (s *Scheduler) traceRequest(r *request, inline bool) {
	ev := RequestEvent{
		Op: r.op, Fd: r.fd, Off: r.off, Len: len(r.buf), Backend: s.backend,
		Inline: inline, Fixed: r.fixed, Submits: r.submits, N: r.done, Err: r.err,
		Enqueue: r.tEnqueue, Submit: r.tSubmit, Complete: r.tComplete, Resume: Now(),
	}
	if inline {
		ev.Submit, ev.Complete = ev.Enqueue, ev.Resume
	}
	s.tracer.RequestDone(ev)
}

// do runs r where route places it and waits for its completion.
func (s *Scheduler) do(r *request) (int, error) {
	c, queue := s.admit(r)
	if !queue {
		return c.Wait()
	}
	where, slot := s.route(r)
	switch where {
	case onCallerNow:
		s.runInline(r)
	case onTransferSlot:
		s.runTransfer(r)
	case onInlineSlot:
		s.runAt(slot, r)
	case onBlockingSlot:
		s.onCaller(r)
	case viaLoopNowait:
		// Back to its caller if it would block, instead of to a
		// worker (caller_linux.go says why only these).
		r.rwf |= unix.RWF_NOWAIT
		r.tryNowait = true
		s.viaLoop(r)
		r.file.triedRing(r.err == errWouldBlock)
		if r.err == errWouldBlock {
			// The ring made what it could without blocking; the
			// caller makes the rest.
			r.err, r.tryNowait = nil, false
			r.rwf &^= unix.RWF_NOWAIT
			s.onCaller(r)
			return s.finishCall(r, true)
		}
		return s.finishCall(r, false)
	default: // viaLoop
		s.viaLoop(r)
		return s.finishCall(r, false)
	}
	c.inline = true
	return c.Wait()
}

// runInline runs r on its caller with blocking system calls, and records
// it: the blocking backend's requests, and the operations AIO lacks.
func (s *Scheduler) runInline(r *request) { s.runTimed(r, s.callerStart(r)) }

// callerStart is when a request run on its caller began: its enqueue
// time, read with a Tracer, else now if the scheduler keeps time.
func (s *Scheduler) callerStart(r *request) int64 {
	if r.tEnqueue != 0 {
		return r.tEnqueue
	}
	return Now()
}

// runTimed runs r on its caller, begun at start, records it in the
// statistics, and returns when it ended (0 when the scheduler keeps no
// time).
func (s *Scheduler) runTimed(r *request, start int64) (end int64) {
	s.stats.onCaller[r.class%NumClasses].Add(1)
	s.blockingDo(r)
	end = Now()
	s.stats.onCaller[r.class%NumClasses].Add(-1)
	s.stats.inline.Add(1)
	s.stats.done(r, start, start, end)
	return end
}

// maxInline is how many requests may run on their callers at once
// (caller_linux.go). Each holds an OS thread in pread, as os.File would, so it must stay a
// small constant: two lets a pair of goroutines run at os.File's speed
// (with one, the second crosses threads); more cost threads for little
// (docs/notes/2026-11-28-design-figures.md).
const maxInline = 2

// ReadAt reads len(p) bytes at off from fd, resubmitting short reads until
// p is full or the file ends (then n < len(p) and err is nil). p must stay
// untouched until ReadAt returns; on O_DIRECT files it must be aligned.
func (s *Scheduler) ReadAt(fd int, p []byte, off int64) (int, error) {
	return s.do(newTransfer(OpRead, nil, int32(fd), p, off))
}

// WriteAt writes all of p at off to fd, resubmitting short writes.
func (s *Scheduler) WriteAt(fd int, p []byte, off int64) (int, error) {
	return s.do(newTransfer(OpWrite, nil, int32(fd), p, off))
}

// Fsync flushes fd's data and metadata to stable storage.
func (s *Scheduler) Fsync(fd int) error {
	return s.doErr(newRequest(OpFsync, nil, int32(fd)))
}

// Fdatasync flushes fd's data, and the metadata needed to read it back.
func (s *Scheduler) Fdatasync(fd int) error {
	return s.doErr(newRequest(OpFdatasync, nil, int32(fd)))
}

// Fallocate is fallocate(2) through the scheduler.
func (s *Scheduler) Fallocate(fd int, mode uint32, off, length int64) error {
	return s.fallocate(nil, int32(fd), mode, off, length)
}

// fallocate is fallocate(2) on fd through the scheduler, for Fallocate
// and File.Fallocate (f nil for the former).
func (s *Scheduler) fallocate(f *File, fd int32, mode uint32, off, length int64) error {
	r := newRequest(OpFallocate, f, fd)
	r.mode, r.off, r.size = mode, off, length
	return s.doErr(r)
}

// doErr is do for a request whose only result is its error.
func (s *Scheduler) doErr(r *request) error {
	_, err := s.do(r)
	return err
}

// nop sends a request that does nothing through the whole path: the cost
// of the scheduler itself.
func (s *Scheduler) nop() error { return s.doErr(newRequest(OpNop, nil, 0)) }
