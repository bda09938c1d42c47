package sched

import (
	"strconv"
	"syscall"
	"time"
)

// Attempt is one submission of a request to the kernel, as a FaultInjector
// sees it. A request resubmitted after a short transfer or an EINTR/EAGAIN
// is a new attempt with a higher Retry. The copy a File in memory makes
// on its caller before any request (PathCaller) counts its own attempts;
// where it stops at an error, the request that makes the rest counts
// from 0 again.
type Attempt struct {
	Op    Op
	Fd    int32
	Off   int64  // where this attempt starts
	Len   int    // bytes it would transfer (reads and writes)
	Flags uint32 // RWF_* flags of a write; RWF_NOWAIT marks a page-cache attempt (ReadAtNowait, its raw hits included, and WriteAtNowait)
	Retry int32  // 0 for the first submission
	Path  Path   // where the attempt runs
}

// Path is where an attempt runs. Every request takes one of them (or
// several, one after another: a page-cache miss goes on through the
// scheduler), and the injector sees each attempt on whichever it takes,
// the same with an injector as without one.
type Path uint8

const (
	// PathQueue: submitted by the loop to io_uring (where the kernel may
	// hand it to one of its worker threads) or Linux AIO.
	PathQueue Path = iota
	// PathCaller: a blocking system call on the caller's thread, as
	// os.File makes it (the idle fast path, syncs, work io_uring would
	// give a worker, the blocking backend, AIO's missing opcodes, the
	// copies of a File in memory, Unlinkat where the ring cannot).
	PathCaller
	// PathPageCache: a page-cache attempt or an inline page-cache write
	// on the caller's goroutine (ReadAtNowait, its raw hits included,
	// WriteAtNowait, and WriteAtInline for the writes package diskio
	// knows read no page).
	PathPageCache
	// PathFlush: the syncfs(2) of a shared flush, one for the syncs of
	// many Files of one filesystem (flush_linux.go), on the caller of
	// one of them; an OpFsync attempt on that caller's descriptor.
	PathFlush
)

func (p Path) String() string {
	switch p {
	case PathQueue:
		return "queue"
	case PathCaller:
		return "caller"
	case PathPageCache:
		return "page cache"
	case PathFlush:
		return "flush"
	}
	return "path(" + strconv.Itoa(int(p)) + ")"
}

// Fault is what to do to one attempt; the zero Fault does nothing.
type Fault struct {
	// Errno fails the attempt without sending it to the kernel: nothing
	// is read or written. The scheduler retries EINTR, and EAGAIN up to
	// 16 times; every other errno goes to the request's caller.
	Errno syscall.Errno
	// Short sends only the first Short bytes of a read or write to the
	// kernel: a real short transfer, which the scheduler resubmits from
	// where it stopped. On O_DIRECT files it must be a multiple of the
	// block size, as the kernel's own short transfers are. Ignored
	// unless 0 < Short < Len.
	Short int
	// Drop does not send an fsync or fdatasync to the kernel and reports
	// success: a device that acknowledges flushes it never did. (A
	// failed flush is Errno on an OpFsync or OpFdatasync attempt.)
	Drop bool
	// Delay holds the attempt's completion until Delay after its
	// submission: a late completion. The loop goes on meanwhile; on
	// the caller's paths the caller sleeps after its system call.
	Delay time.Duration
}

// FaultInjector chooses the faults of Options.Faults. Fault is called for
// every attempt on every path (Attempt.Path): on the scheduler's
// goroutine for PathQueue, on the caller's goroutine for the others. So
// it must be quick, must not call the scheduler, and must be safe for
// concurrent use.
//
// The injector is a decorator, as Pebble's errorfs wraps a file system:
// it sits between the loop and the kernel queue, and between callers and
// their system calls, and nowhere else. The scheduler takes the same
// routes with one as without (a page-cache hit made as a raw system call
// is made so under faults too), and everything above it (retries, short
// transfers continued, errors delivered) is the scheduler's real code.
type FaultInjector interface {
	Fault(a Attempt) Fault
}

// FaultFunc is a FaultInjector.
type FaultFunc func(Attempt) Fault

func (f FaultFunc) Fault(a Attempt) Fault { return f(a) }
