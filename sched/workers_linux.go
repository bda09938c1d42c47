//go:build linux

package sched

import (
	"fmt"
	"math"
	"runtime"

	"github.com/diskio-go/diskio/uring"
)

// defaultIOWQMaxWorkers is the default cap on io_uring's worker threads
// (Options.IOWQMaxWorkers).
const defaultIOWQMaxWorkers = 4

// WorkerStatus says how many io_uring worker threads (io-wq, named
// iou-wrk-<tid> in /proc) the scheduler's ring may start, as the kernel
// accepted the cap, and if there is no cap, why.
type WorkerStatus struct {
	// Capped is true when the kernel took the cap; Max is then what it
	// accepted (it lowers a cap above RLIMIT_NPROC).
	Capped bool
	Max    uring.MaxWorkers
	Reason string
}

func (w WorkerStatus) String() string {
	if !w.Capped {
		return "io_uring workers: not capped (" + w.Reason + ")"
	}
	return fmt.Sprintf("io_uring workers: at most %d bounded + %d unbounded", w.Max.Bounded, w.Max.Unbounded)
}

// iowqMaxWorkers resolves Options.IOWQMaxWorkers: 0 is the default;
// negative leaves the kernel's limits.
func iowqMaxWorkers(n int) int {
	if n != 0 {
		return n
	}
	return defaultIOWQMaxWorkers
}

// capWorkers caps the worker pools of every thread that submits to the
// ring, and reads back what the kernel accepted from the calling thread's
// pool. It runs on the loop's goroutine before the loop starts, with
// nothing in flight: a NOP first attaches the calling thread to the ring
// (workers belong to the submitting thread, and the kernel reads limits
// back only from a thread that has a pool).
func (q *uringQueue) capWorkers(n int) WorkerStatus {
	if n < 0 {
		return WorkerStatus{Reason: "disabled by Options.IOWQMaxWorkers"}
	}
	if n > math.MaxInt32 {
		return WorkerStatus{Reason: fmt.Sprintf("Options.IOWQMaxWorkers %d is more than the kernel takes (%d)", n, math.MaxInt32)}
	}
	want := uring.MaxWorkers{Bounded: uint32(n), Unbounded: uint32(n)}
	// The goroutine is not locked to its thread yet, and may move between
	// the calls: the kernel then reads back zeros (the new thread has no
	// pool). A few attempts find one thread for all three.
	var got uring.MaxWorkers
	for range 4 {
		sqe := q.sqe()
		sqe.PrepNop()
		sqe.UserData = ^uint64(0)
		if _, err := q.ring.SubmitAndWait(1); err != nil {
			return WorkerStatus{Reason: err.Error()}
		}
		if _, err := q.ring.ReapCQEs(q.cqes[:1]); err != nil {
			return WorkerStatus{Reason: err.Error()}
		}
		if _, err := q.ring.RegisterIOWQMaxWorkers(want); err != nil {
			return WorkerStatus{Reason: err.Error()}
		}
		q.maxWorkers = want
		var err error
		if got, err = q.ring.RegisterIOWQMaxWorkers(uring.MaxWorkers{}); err != nil {
			return WorkerStatus{Reason: err.Error()}
		}
		if got != (uring.MaxWorkers{}) {
			break
		}
	}
	return WorkerStatus{Capped: true, Max: got}
}

// recapWorkers applies the cap to the calling thread's pool again. The
// kernel gives a ring's limits to a thread that attaches later only if
// that ring is the first the thread ever used; the loop's thread may have
// used another scheduler's ring before it was locked to this one.
func (q *uringQueue) recapWorkers() {
	if q.maxWorkers == (uring.MaxWorkers{}) {
		return
	}
	// It cannot fail where the first registration succeeded; if it
	// did, the pool would merely keep the limits it has.
	q.ring.RegisterIOWQMaxWorkers(q.maxWorkers)
}

// mayBlock reports whether io_uring may hand op to a worker thread: an
// fsync, a fallocate, an unlink (always), a write that extends a file or
// goes through the page cache. O_DIRECT reads complete without one (and buffered reads on ext4
// use the page cache's asynchronous wake-ups).
func mayBlock(op Op) bool {
	switch op {
	case OpWrite, OpFsync, OpFdatasync, OpFallocate, OpUnlink:
		return true
	}
	return false
}

// lockForWorkers locks the loop to its OS thread before the first request
// that may go to a worker, so that every such request is submitted from
// one thread and io_uring keeps one worker pool for the ring. Reads alone
// never lock it, nor writes sent with RWF_NOWAIT (they come back instead,
// see caller_linux.go): locking costs the process a thread (the runtime's
// template thread), and they need no workers.
func (l *loop) lockForWorkers(r *request) {
	if l.locked || l.ring == nil || r.tryNowait || !mayBlock(r.op) {
		return
	}
	// Never unlocked: when run returns, the runtime ends the thread,
	// and with it its workers.
	runtime.LockOSThread()
	l.locked = true
	l.recap = true
	l.s.locked.Store(true)
}
