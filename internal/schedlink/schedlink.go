// Package schedlink is the part of a *sched.Scheduler that only package
// diskio uses: page-cache attempts on the caller's goroutine, per-write
// RWF_* flags, the registered file table, descriptor names and the buffer
// cache. Keeping them here keeps them out of sched's public API.
//
// Package sched fills in Of and SetDefaultTracer when it is initialized.
package schedlink

import "sync/atomic"

// Scheduler is what Of returns for a *sched.Scheduler. Its methods have
// the contracts of the sched methods they stand for (see sched's link
// file); errors from the caller-side calls are bare syscall.Errno values,
// as the kernel gives them.
type Scheduler interface {
	// ReadAtNowait is one preadv2(fd, p, off, RWF_NOWAIT) on the
	// caller's goroutine: what the page cache holds, never a wait for
	// the disk. n may be short; EAGAIN means nothing was cached;
	// NowaitRefused errors mean RWF_NOWAIT cannot be used on fd.
	// expectHit lets a small attempt skip the runtime's system-call
	// bookkeeping: pass it only when a hit is likely.
	ReadAtNowait(fd int, p []byte, off int64, expectHit bool) (int, error)
	// WriteAtNowait is one pwritev2(fd, p, off, rwf|RWF_NOWAIT).
	WriteAtNowait(fd int, p []byte, off int64, rwf uint32) (int, error)
	// WriteAtInline writes all of p at off (-1: the descriptor's own
	// offset) on the caller's goroutine, as os.File does, for a write
	// that waits for no disk read.
	WriteAtInline(fd int, p []byte, off int64, rwf uint32) (int, error)
	// WriteAtFlags is sched's WriteAt with RWF_* flags for this write
	// (RWF_DSYNC, RWF_APPEND), through the ring.
	WriteAtFlags(fd int, p []byte, off int64, rwf uint32) (int, error)
	// RegisterFile adds fd to io_uring's registered file table;
	// UnregisterFile removes it, and must come before fd is closed.
	RegisterFile(fd int) error
	UnregisterFile(fd int) error
	// SetName names fd in slow-request reports; "" removes the name,
	// which must happen before fd is closed.
	SetName(fd int, name string)
	// GetBuffer and PutBuffer take and give back page-aligned memory
	// from the scheduler's buffer cache.
	GetBuffer(n int) ([]byte, error)
	PutBuffer(b []byte)
	// BufferStats reports the buffer cache's counters.
	BufferStats() BufferStats
	// Learnt is what the scheduler's files have learnt about the
	// kernel, shared by its later files.
	Learnt() *Learnt
}

// Learnt is what files opened on one scheduler learnt about the kernel
// and share: what one of them found costs the next nothing.
type Learnt struct {
	// NowaitWritesRefused: a file's pwritev2(RWF_NOWAIT) was refused
	// (ext4 refuses them all), so later files skip the attempt.
	NowaitWritesRefused atomic.Bool
}

// BufferStats says what a scheduler's buffer cache holds and has taken.
type BufferStats struct {
	// Allocs counts the GetBuffer calls the cache could not serve
	// (a new arena block, or an mmap when the arena is full): none in
	// steady state.
	Allocs uint64
	// Cached is the memory the cache holds for reuse, in bytes.
	Cached int
	// Arena is the size of the registered arena while it is mapped:
	// 0 without one, and once the scheduler is closed and every block
	// of it has been given back.
	Arena int
}

// Of returns s's Scheduler; s must be a non-nil *sched.Scheduler.
var Of func(s any) Scheduler

// SetDefaultTracer starts the process-wide scheduler (sched.Default's)
// now with t, a sched.Tracer, as its tracer, and reports true; if it has
// already started, it changes nothing and reports false.
var SetDefaultTracer func(t any) bool

// SetRingFlags sets extra IORING_SETUP_* flags (SQPOLL, IOPOLL) in opts,
// a *sched.Options, for the testbench rows that reproduce experiments
// with them; they measured no better than none for diskio's own use, so
// sched.Options does not offer them.
var SetRingFlags func(opts any, flags uint32)
