// Package sched is diskio's I/O scheduler: one goroutine, locked to an OS
// thread, that takes read, write, sync and fallocate requests from any
// number of goroutines, batches them into io_uring (or Linux AIO)
// submissions, and wakes each caller when its completion arrives.
//
// # Why it is built this way
//
// An os.File read blocks an OS thread, so 128 goroutines reading a disk keep
// ~60 threads parked in pread and pay a thread wake-up per operation. The
// scheduler keeps all of them in one kernel queue instead. What makes or
// breaks such a design is the cost of waking threads, measured on the
// development VM (../shared/tools/wakecost): a channel round trip between
// plain goroutines costs 0.3µs, but waking a locked goroutine that sleeps
// (on a channel or in a system call) costs 16-27µs. So:
//
//   - The loop never parks on a Go channel. Callers send on a buffered
//     channel; the loop takes from it without blocking, and when it has
//     nothing to do it sleeps in the kernel (io_uring_enter with GETEVENTS,
//     or io_getevents) with a read of an eventfd armed in the same queue. A
//     caller writes the eventfd only when the loop announced that it sleeps
//     (a sequentially consistent flag and counter: either the caller sees
//     the flag, or the loop sees the queued request).
//   - Before sleeping the loop spins for Options.Spin (20µs), because under
//     load the next request or completion usually comes sooner than a
//     wake-up would take.
//   - When the scheduler is idle (nothing queued or in flight), one request
//     at a time is issued inline by its caller with a plain system call:
//     for a lone caller that is what os.File does, without the two thread
//     wake-ups a trip through the loop would cost. Under concurrency the
//     ring takes over. (Measured with -bench RandRead4K/uring/g=1: ~115µs
//     per 4 KiB read through the loop against ~30µs inline.)
//
// In-flight work is bounded by Options.Entries; the CQ is twice that, so it
// never overflows. Callers beyond the bound wait on the channel; they never
// fail. Short reads and writes are resubmitted from where they stopped,
// EINTR and EAGAIN are retried, every other error goes to the one caller
// whose request failed (EINVAL on O_DIRECT files explained with the file's
// alignment). Requests and their completion channels are pooled: a read
// allocates nothing in steady state. A caller's buffer is referenced by its
// request until the completion is reaped, so it stays alive; the Go heap
// does not move objects. On O_DIRECT files buffers must be aligned (see
// internal/mem).
//
// Close refuses new requests, lets every accepted request complete, then
// releases the kernel queue, the eventfd and the thread.
//
// Backends: io_uring (default), Linux AIO (asynchronous only for O_DIRECT
// files; NOP and fallocate run inline), and blocking (the os.File
// behaviour, baseline and last fallback). New falls back along
// uring -> aio -> blocking and keeps the reason (FallbackReason);
// DISKIO_BACKEND=uring|aio|blocking or Options.Backend forces one.
package sched
