package sched

import (
	"syscall"
	"time"
)

// Attempt is one submission of a request to the kernel, as a FaultInjector
// sees it. A request resubmitted after a short transfer or an EINTR/EAGAIN
// is a new attempt with a higher Retry.
type Attempt struct {
	Op    Op
	Fd    int32
	Off   int64  // where this attempt starts
	Len   int    // bytes it would transfer (reads and writes)
	Flags uint32 // RWF_* flags of a write; RWF_NOWAIT marks a page-cache attempt (ReadAtNowait, WriteAtNowait)
	Retry int32  // 0 for the first submission
}

// Fault is what to do to one attempt; the zero Fault does nothing.
type Fault struct {
	// Errno fails the attempt without sending it to the kernel: nothing
	// is read or written. The scheduler retries EINTR and EAGAIN; every
	// other errno goes to the request's caller.
	Errno syscall.Errno
	// Short sends only the first Short bytes of a read or write to the
	// kernel: a real short transfer, which the scheduler resubmits from
	// where it stopped. On O_DIRECT files it must be a multiple of the
	// block size, as the kernel's own short transfers are. Ignored
	// unless 0 < Short < Len.
	Short int
	// Drop does not send an fsync or fdatasync to the kernel and reports
	// success: a device that acknowledges flushes it never did.
	Drop bool
	// Delay holds the attempt's completion until Delay after its
	// submission: a late completion. The loop goes on meanwhile.
	Delay time.Duration
}

// FaultInjector chooses the faults of Options.Faults. Fault is called on
// the scheduler's goroutine for every attempt, so it must be quick and must
// not call the scheduler; for page-cache attempts (Flags has RWF_NOWAIT)
// it is called on the caller's goroutine, so an injector used with
// ReadAtNowait or WriteAtNowait must be safe for concurrent use.
type FaultInjector interface {
	Fault(a Attempt) Fault
}

// FaultFunc is a FaultInjector.
type FaultFunc func(Attempt) Fault

func (f FaultFunc) Fault(a Attempt) Fault { return f(a) }
