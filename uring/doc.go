// Package uring is a pure-Go interface to Linux io_uring, written for one
// owner: a scheduler goroutine that batches many requests into each
// io_uring_enter and reaps many completions per wake-up.
//
// A Ring is the pair of shared queues the kernel maps into the process (the
// submission queue of SQEs and the completion queue of CQEs) plus the ring's
// file descriptor. The owner takes SQEs with GetSQE, prepares them with the
// Prep methods, submits all of them with one Submit (or SubmitAndWait, which
// also sleeps in the kernel until completions arrive, with an optional
// timeout through IORING_ENTER_EXT_ARG) and copies completions out with
// ReapCQEs, which publishes the new CQ head once per batch.
//
// Memory ordering follows the kernel's contract: the SQ tail is published
// with a store-release after the SQEs are written, the CQ tail is read with a
// load-acquire before the CQEs are read, and the CQ head is published with a
// store-release after they are copied. Go's sync/atomic operations are
// sequentially consistent, which is at least that strong; on amd64 the SQ tail
// store is an XCHG, a full barrier, which the SQPOLL wake-up check needs.
//
// The kernel reads and writes request memory by address, behind the Go
// garbage collector's back. Buffers, iovec arrays and timespecs given to a
// Prep method must stay alive and unmoved until the request's completion has
// been reaped: use memory from unix.Mmap (page-aligned, as O_DIRECT needs)
// or pin Go memory with runtime.Pinner.
//
// Errors are handled on purpose, as the kernel documents them: EINTR from
// io_uring_enter is retried; EAGAIN and EBUSY (the kernel is short of memory,
// or completions overflowed the CQ) are returned as ErrBusy after what could
// be submitted was, and the owner reaps before retrying; ETIME from a wait
// with a timeout is not an error; EBADR (completions were dropped, possible
// only on kernels without IORING_FEAT_NODROP) is ErrCQEDropped. When the
// kernel has kept completions on its overflow list because the CQ was full,
// ReapCQEs flushes them into the ring, so keeping more requests in flight
// than the CQ holds loses nothing, though it is slower: size the CQ to the
// in-flight bound.
//
// A Ring is not safe for concurrent use. With IORING_SETUP_SINGLE_ISSUER or
// IORING_SETUP_DEFER_TASKRUN it must also stay on one OS thread (create and
// use it under runtime.LockOSThread), and with DEFER_TASKRUN completions are
// only posted while the owner waits in SubmitAndWait.
//
// Probe and Detect report what the running kernel supports: ring features,
// setup flags it accepts, and opcodes.
package uring
