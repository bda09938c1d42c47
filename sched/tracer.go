package sched

import "time"

// Syscall names a system call the scheduler makes, for a Tracer.
type Syscall uint8

var syscallNames = [...]string{"io_uring_enter", "io_submit", "io_getevents", "eventfd_write", "pread", "pwrite", "fsync", "fdatasync", "fallocate", "preadv2", "pwritev2", "unlinkat", "syncfs"}

func (c Syscall) String() string {
	if int(c) < len(syscallNames) {
		return syscallNames[c]
	}
	return "syscall?"
}

// SyscallEvent is one system call: when, how long, and how much work it
// carried. Times are Now() values.
type SyscallEvent struct {
	Call       Syscall
	Start, End int64
	Submitted  int  // requests handed to the kernel by this call
	Reaped     int  // completions taken right after it
	Wait       bool // the call slept until a completion arrived
}

// RequestEvent is one request's life, reported once, on the caller's
// goroutine after it resumed (so a tracer can take the caller's stack).
// Times are Now() values: Enqueue (caller hands it over), Submit (first
// handed to the kernel), Complete (final completion reaped), Resume (caller
// running again). Inline requests have Submit = Enqueue and
// Complete = Resume.
type RequestEvent struct {
	Op      Op
	Fd      int32
	Off     int64
	Len     int
	Backend Backend
	Inline  bool  // ran on the caller's goroutine (blocking backend, idle fast path)
	Nowait  bool  // a page-cache attempt with RWF_NOWAIT (ReadAtNowait, WriteAtNowait); Inline too
	Fixed   bool  // used a registered buffer
	Submits int32 // times submitted: more than 1 after short or interrupted I/O
	N       int   // bytes transferred
	Err     error

	Enqueue, Submit, Complete, Resume int64
}

// Tracer receives the scheduler's events. With no Tracer the scheduler
// reads no clocks for the Tracer (it reads them once per batch for its
// statistics) and makes no calls. SyscallDone is called on the loop
// goroutine, or on a caller's goroutine for the system calls made there
// (blocking and inline requests, page-cache attempts, the copies of a
// File in memory; each attempt one call, an injected fault's included)
// and for eventfd writes; RequestDone on the caller's goroutine. A
// request takes the same route with a Tracer as without. A Tracer must be
// safe for concurrent use, must not block, and must not keep the event's
// error beyond the call if it is to stay allocation-free.
type Tracer interface {
	SyscallDone(ev SyscallEvent)
	RequestDone(ev RequestEvent)
}

var epoch = time.Now()

// Now is the tracer clock: monotonic nanoseconds since the process started
// using this package.
func Now() int64 { return int64(time.Since(epoch)) }
