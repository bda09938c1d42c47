//go:build linux

package sched

import (
	"sync"
	"sync/atomic"
)

const (
	OpNop Op = iota
	OpRead
	OpWrite
	OpFsync
	OpFdatasync
	OpFallocate
	OpUnlink // unlinkat(2): Scheduler.Unlinkat

	// Control requests: handled by the loop itself, never sent to the
	// kernel queue as I/O.
	opRegisterFile
	opUnregisterFile
)

// request is one caller's operation, from enqueue to wake-up. Requests are
// pooled: steady state allocates nothing.
type request struct {
	op   Op
	file *File // the File it is on, or nil for a request by descriptor number
	fd   int32
	buf  []byte // read/write memory, or OpUnlink's NUL-terminated path; this reference keeps it alive until reaped
	off  int64
	mode uint32 // fallocate mode, or unlinkat flags
	size int64  // fallocate length
	rwf  uint32 // RWF_* flags of a write (RWF_DSYNC): WriteAtFlags

	done int   // bytes transferred so far (short I/O is resubmitted)
	err  error // final error, nil on success

	wake  chan struct{} // capacity 1: the scheduler's send never blocks
	group *batchWait    // the Batch that started it, or nil
	next  *request      // in Scheduler.incoming, then in the loop's pending list

	// Timestamps (Now): tEnqueue for the tracer (zero without one),
	// when the caller handed the request over; tTaken for the
	// statistics, when the loop took it from the incoming stack (one
	// clock read per batch: a clock read costs more than the rest of
	// the statistics); tSubmit, the first submission; tComplete, the
	// final completion reaped.
	tEnqueue, tTaken, tSubmit, tComplete int64
	submits                              int32
	again                                uint8 // attempts that ended in EAGAIN (sys.AgainLimit)
	fixed                                bool  // went through a registered buffer

	// detached: the caller gave its reference on the scheduler back
	// when it handed the request to the loop (a started call, which
	// may be waited for late or never), not at Wait.
	detached bool

	class       Class
	classGiven  bool  // class was given per call: its File's class does not apply
	slowReports uint8 // slow-request reports made (slow_linux.go)
	bounded     bool  // a background request submitted while latency work waited (class_linux.go)
	// tryNowait: a write sent to the ring with RWF_NOWAIT, to come back
	// (errWouldBlock) rather than go to an io_uring worker; callerSlot:
	// the slot a request waiting in a slotQueue was given (caller_linux.go).
	tryNowait  bool
	callerSlot *callerSlot

	// The wake-up relay (relay_linux.go): waiting is set by the caller
	// when it begins to wait in await; relayNext is the caller it wakes
	// next, relayEnd that it hands the loop's P back instead.
	waiting   atomic.Bool
	relayNext *request
	relayEnd  bool
}

var requestPool = sync.Pool{New: func() any { return &request{wake: make(chan struct{}, 1)} }}

func getRequest() *request { return requestPool.Get().(*request) }

// newRequest returns a pooled request for op on descriptor fd, made
// through f, or by descriptor number when f is nil. Every request starts
// here: a File's methods and the calls by descriptor number set up the
// same fields.
func newRequest(op Op, f *File, fd int32) *request {
	r := getRequest()
	r.op, r.file, r.fd = op, f, fd
	return r
}

// newTransfer is newRequest for a read or write of p at off.
func newTransfer(op Op, f *File, fd int32, p []byte, off int64) *request {
	r := newRequest(op, f, fd)
	r.buf, r.off = p, off
	return r
}

// giveClass gives r class c whatever its File's (ReadAtClass,
// Batch.SetClass).
func (r *request) giveClass(c Class) { r.class, r.classGiven = c%NumClasses, true }

func putRequest(r *request) {
	*r = request{wake: r.wake}
	requestPool.Put(r)
}

// remaining is the part of a read or write still to transfer.
func (r *request) remaining() []byte { return r.buf[r.done:] }

// batchWait lets the goroutine that started a Batch wait for all of its
// calls with one wake-up instead of one per call. left counts the calls
// not yet complete plus one, held by the waiter until Batch.WaitAll, so
// that it cannot reach zero while calls are still being added.
type batchWait struct {
	left atomic.Int64
	wake chan struct{} // capacity 1
}

// done records one completed call of the batch (g may be nil).
func (g *batchWait) done() {
	if g != nil && g.left.Add(-1) == 0 {
		g.wake <- struct{}{}
	}
}
