// Package sched is diskio's I/O scheduler: one goroutine, owning one kernel
// queue, that takes read, write, sync and fallocate requests from any
// number of goroutines, batches them into io_uring (or Linux AIO)
// submissions, and wakes each caller when its completion arrives. Callers
// wait as parked goroutines, not as threads blocked in system calls, so a
// process doing I/O from thousands of goroutines keeps a handful of OS
// threads. Package diskio's Files use it; a program can use it directly on
// descriptors it owns.
//
// The design and the measurements behind it are in docs/scheduler.md.
//
// # Backends
//
// New starts io_uring (Linux 5.6+), else Linux AIO, else the blocking
// backend (pread and pwrite on the caller's thread, what os.File does),
// and keeps why it skipped the earlier ones (FallbackReason).
// Options.Backend forces one (DISKIO_BACKEND for Default's). Linux
// AIO is asynchronous only for O_DIRECT files: a read or write of a file
// without O_DIRECT, which io_submit would make on the loop's thread, runs
// on its caller's thread instead, as do the blocking backend's, in one of
// a bounded set of transfer slots (64); callers beyond them wait,
// parked. A started Call's and a Batch's still go to the loop (their
// callers go on). Default returns the process-wide scheduler, started on first
// use.
//
// # Requests
//
// ReadAt, WriteAt, Fsync, Fdatasync and Fallocate wait for their request;
// StartReadAt and StartWriteAt return a Call to wait for later, and a
// Batch submits many together and waits for all of them with one wake-up.
// Every method is safe for concurrent use.
//
// Short reads and writes are resubmitted from where they stopped, until
// the buffer is done or a read reaches the end of the file (then n is
// short and the error nil). EINTR is retried; EAGAIN is retried up to 16
// times, then fails the request like any other error. Any other kernel
// error fails only the request it belongs to, as the bare syscall.Errno a
// system call would give (the caller knows the operation, offset and
// length, and wraps it once at its API edge); EINVAL on an O_DIRECT file
// is explained with the file's alignment.
//
// # Memory
//
// A request refers to its caller's buffer until its completion has been
// reaped, and the call returns only then: the buffer stays alive and, on
// the Go heap, unmoved. The caller must not touch it until the call (or
// the Call's Wait) returns. On O_DIRECT files the buffer's address,
// length and offset must be aligned (AllocBuffer's memory always is).
// A read or write allocates nothing in steady state.
//
// # Bounds
//
// At most Options.Entries requests are in the kernel at once; callers
// beyond that wait, they never fail. When the scheduler is idle, up to
// two waiting requests at a time run inline on their callers with one
// system call, and so do latency-class syncs whatever is in flight, in
// the same two caller slots (on io_uring, syncs take only the slots
// below). On io_uring, what the ring would hand to one of its worker
// threads runs on its caller instead: syncs, fallocate and
// unlink, and writes of the latency and background classes that the
// kernel cannot start without blocking (sent with RWF_NOWAIT, they come
// back), at most Options.IOWQMaxWorkers (default 4) at a time, latency
// class first; the others wait parked. Without unclassified writes that
// would block, the loop never locks itself to its thread and the process
// has no worker threads; after one, the ring has its workers, and all
// such work goes to them. Options.NoInline turns all three off. Requests
// on callers are watched for slowness and counted as the loop's requests
// are. Nothing polls while idle: the loop spins for at most Options.Spin
// after its last progress, then sleeps in the kernel. The callers that a
// round of completions wakes run one after another on the loop's P, each
// waking the next, and the last hands the P back to the loop: neither
// they nor the loop wait for the program's busy goroutines to be
// preempted.
//
// # Classes and statistics
//
// A request's Class (File.SetClass per file, ReadAtClass and the like
// per call, Batch.SetClass) orders it against others: while Latency
// requests are queued or in flight, Background requests in flight are
// bounded (ClassOptions). Stats reports requests, bytes, queue and device
// time by operation and class; requests in the kernel longer than
// Options.SlowThreshold are reported to Options.OnSlow and counted.
//
// # Lifetime
//
// Close refuses new requests (ErrClosed), lets every accepted request
// complete, including started Calls never waited for, then releases the
// kernel queue, its thread and its memory.
//
// # Tracing and faults
//
// Options.Tracer receives every system call and every request's timeline
// (times are Now values). Options.Faults injects errors, short
// transfers, delays and failed flushes into every attempt on every path
// a request takes (Path: the kernel queue, the caller's thread, the page
// cache), for tests. Both are decorators, of the kernel queue and of the
// system calls made on callers: neither changes a path.
//
// # Environment
//
// New reads no environment. The process-wide scheduler (Default), which
// package diskio's Files use unless opened with a scheduler of their
// own, starts with OptionsFromEnv's Options, and so with these variables:
//
//	DISKIO_BACKEND           uring, aio or blocking: Options.Backend
//	                         (unset: Auto, the first of them that starts)
//	DISKIO_IOWQ_MAX_WORKERS  a positive count, or negative for the
//	                         kernel's limits: Options.IOWQMaxWorkers
//	                         (unset: 4)
//
// A value it cannot use makes Default return an error naming it.
// Package diskio reads DISKIO_TRACE and its companions (see its
// documentation).
package sched
