// Package sched is diskio's I/O scheduler: one goroutine, owning one kernel
// queue, that takes read, write, sync and fallocate requests from any
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
// plain goroutines costs 0.3µs, but waking a goroutine whose thread sleeps
// (a locked goroutine parked on a channel, or any goroutine in a blocking
// system call) costs 16-27µs. So:
//
//   - The loop never parks on a Go channel. Callers push their requests on
//     a lock-free stack (one compare-and-swap, never blocking); the loop
//     takes the whole stack in one swap, and when it has nothing to do it
//     sleeps in the kernel (io_uring_enter with GETEVENTS, or io_getevents)
//     with a read of an eventfd armed in the same queue. A caller writes
//     the eventfd only when the loop announced that it sleeps (sequentially
//     consistent flag and stack: either the caller sees the flag, or the
//     loop sees the request). The stack replaced a buffered channel: one
//     swap per batch instead of a channel receive per request, and callers
//     beyond the in-flight bound no longer park on a full channel
//     (BenchmarkNop: 2.3-2.4M against 2.0-2.1M requests/s from 128
//     goroutines, 3.2-3.5M against 2.6-3.0M from 1024, alternate runs).
//   - Before sleeping the loop spins for Options.Spin (20µs), because under
//     load the next request or completion usually comes sooner than a
//     wake-up would take. Not when every slot is in flight: then nothing
//     can be submitted before a completion, so the loop waits for one in
//     the kernel at once, without announcing a sleep (producers write no
//     eventfd). At 10,000 goroutines that cut CPU per read from 6.1-7.5µs
//     to 5.3-6.2µs at the same IOPS (alternate runs). Waiting for 16
//     completions instead of one saved a further 3-6%, within noise, and
//     would delay the first of them; not kept.
//   - After reaping completions that woke callers, the loop yields its
//     thread (runtime.Gosched), unless it is locked to it. The first
//     caller woken waits in the loop's P, and would otherwise wait for
//     another thread to be woken to steal it, while the loop slept; its
//     next request (a stream's refill, a reader's next read) then had to
//     wake the loop through the eventfd. Yielding runs the caller at once
//     and the loop on the thread Gosched wakes, which finds those
//     requests together. 4 KiB scan, read-ahead 50: a slot's refill 82-115
//     against 42-52µs, 0.08-0.09 against 0.06 system calls per read, 37-39
//     against 42-43 reads in flight (BenchmarkScanRefill in the root
//     package, alternate runs); GOMAXPROCS=1: 225 against 25µs, 32 against
//     47 in flight.
//   - When the scheduler is idle (nothing queued or in flight), up to two
//     requests at a time are issued inline by their callers with a plain
//     system call: for one or two callers that is what os.File does,
//     without the two thread wake-ups a trip through the loop would cost.
//     Under concurrency the ring takes over. (Measured with -bench RandRead4K/uring/g=1: ~115µs
//     per 4 KiB read through the loop against ~30µs inline.) Only the
//     waiting calls (ReadAt, WriteAt, Fsync...) take it; StartReadAt and
//     Batch never do, since their caller wants to go on. diskio's one-deep StreamReader and a ReadMany
//     whose ranges merge into one read therefore call ReadAt, not Batch.
//
// What was measured and kept (go test -bench RandRead4K ./sched/, 128
// goroutines; the VM's disk moves ±20% between runs, so alternatives were
// run alternately): io_uring without setup flags, COOP_TASKRUN with
// TASKRUN_FLAG, and SINGLE_ISSUER with DEFER_TASKRUN gave the same IOPS
// within noise, the last two 5-10% less CPU per op in some runs and not in
// others; SQPOLL doubled CPU per op (its kernel thread spins on one of the
// two cores). The default is no flags; Options.RingFlags selects others.
// Locking the loop to its OS thread (Options.LockOSThread) made no
// measurable difference to IOPS or CPU either, but it costs a thread: the
// first runtime.LockOSThread in a process starts the runtime's template
// thread. With GOMAXPROCS=2 a process doing 4 KiB reads from 128 goroutines
// peaked at 6-7 OS threads with the loop locked and 5-6 (GOMAXPROCS+4 is 6)
// without, where os.File peaks at 60-95. So reads alone do not lock the
// loop (writes and syncs do, below; so do SINGLE_ISSUER and DEFER_TASKRUN,
// and the option). It never
// parks on a Go channel either way, so it holds its thread while it sleeps
// in the kernel. Parking the loop in the Go netpoller on the ring's descriptor
// (readable when the CQ holds completions) instead of sleeping in
// io_uring_enter, so that it holds no thread while asleep, was measured
// too: the same IOPS, 6-7 threads instead of 6-8, and 15-20% more CPU per
// read (alternate runs at 128 goroutines), so it was not kept. Those 6-8
// turned out to include two threads that were not the scheduler's: a
// binary linking cgo (package net does, through its resolver, wherever a C
// compiler is installed; testify links net into test binaries) starts the
// runtime's template thread at init, and os/signal.Notify starts a locked
// thread and the template thread. Without them a fresh process has 4
// threads and a read-heavy one peaks at 5-6; the testbench links neither,
// and CGO_ENABLED=0 builds benchmark binaries without the first.
//
// Writes and syncs need more than that. io_uring runs what cannot complete
// without blocking (fsync and fdatasync, fallocate, an O_DIRECT write that
// extends an ext4 file, buffered writes) on io-wq worker threads, named
// iou-wrk-<tid of the submitting thread>: they belong to the thread that
// submitted, and count as threads of the process (RLIMIT_NPROC). An
// unlocked loop submits from whichever thread it runs on, and each of
// those got a pool of its own, of up to 4 x CPUs workers: 64 goroutines
// extending their files with a Datasync every fourth write peaked at 41-47
// threads, 32-40 of them workers. So the loop locks itself to its thread
// before the first write, sync or fallocate it submits (reads alone never
// do: they need no workers, and the lock costs the template thread), and
// caps the ring's pool with IORING_REGISTER_IOWQ_MAX_WORKERS
// (Options.IOWQMaxWorkers, default 4; Fixed().Workers says what the kernel
// accepted). The cap is set on bounded and unbounded workers alike, but
// io-wq runs all work on regular files on bounded ones (allowed 1 bounded
// and 6 unbounded, those 64 writers ran one worker), so file I/O gets 4.
// The kernel gives a ring's cap to a thread when it first submits to it
// only if that is the thread's first ring, so the loop registers the cap
// once more from its locked thread.
//
// With GOMAXPROCS=2, 64 and 1,000 such writers peak at 10-12 threads, 4
// of them workers, all of one thread; on Linux AIO (no workers of ours:
// its fsync runs on the kernel's shared workqueue) at 5-7
// (TestWriterThreadsBounded, 15 runs, CGO_ENABLED=0). The 6-8 that are not
// workers are the runtime's: m0, sysmon, the loop's, the template thread
// the first runtime.LockOSThread starts, and Ms started to take a P from a
// thread blocked in a system call when no idle one was left (perf record
// -e syscalls:sys_enter_clone -g names the path of each: handoffp from
// sysmon's retake, or from a locked goroutine that parked). The same 64
// goroutines reading instead peak at 5-7 with the loop unlocked and 6-7
// locked. So GOMAXPROCS + 4 + the cap holds with the cap counted as the
// kernel accepted it (4 + 4: 14, against 10-12), not with it counted as
// the 4 workers file I/O can have (10, passed by 1-2 in 10 of 15 runs):
// the lock's template thread, and a P retaken from a thread blocked in a
// write or sync, put the floor at GOMAXPROCS + 4 to 6 before the workers.
//
// The cap's cost, measured side by side (BenchmarkWorkerCaps: a scheduler
// per cap in one process, slices rotated, 30 rounds; median ratio to a cap
// of 8, the kernel's own pool size on 2 CPUs):
//
//	cap                              1      2      4      8
//	group commit, recycled log       1.06x  1.11x  1.00x  16.7k commits/s
//	group commit, preallocated       1.06x  1.04x  0.97x  12.1k commits/s
//	durable stream (a new file)      1.34x  1.38x  1.52x  255 MB/s
//	64 writers, own files, Datasync  0.63x  0.82x  0.90x  3.3k writes/s
//	threads (workers), group commit  8-9(1) 9-10(2) 12-13(4) 15-16(8)
//
// (Threads: the whole benchmark process, sampled from outside.) Between
// rounds a cap moved 0.75-1.3x (quartiles). Two more runs gave, at 4,
// 0.95x and 0.93x (no own files in that one), then 1.02x and 1.07x for
// group commit, 1.01x and 1.43x for the stream, 0.82x for the own files:
// group commit and the stream need no more than 4, and the stream is
// faster with fewer workers (ext4 serialises extending writes on the
// inode lock, so more workers only queue on it). Many files each synced
// on its own want more, as each fdatasync holds a worker while it waits
// for the journal: 4 gets 0.82-0.90x of 8 there (IOWQMaxWorkers raises
// it).
//
// Registered buffers and files (AllocBuffer, RegisterFile) gave +15-20% IOPS
// and 15-25% less CPU per op.
//
// The cost of this design is at low concurrency: from 3 to ~8 goroutines a
// request through the loop crosses threads three times (caller to loop,
// kernel to loop, loop to caller) where os.File's pread crosses once. With
// one inline request at a time, 2 goroutines got 0.36-0.41x of os.File's
// IOPS; with two (the default) 0.91-0.99x. The inline places are capped at
// two because each holds an OS thread, as os.File's pread does. 4
// goroutines get 0.86-0.95x and 8 goroutines 1.01-1.05x, against an
// os.File that stays at ~62k IOPS from 2 to 128 goroutines on this disk
// (go run ./cmd/testbench -file F -goroutines 2,4,8 -backends
// uring,os.File, two runs, each in its own process; earlier runs of the
// sched benchmark on a machine busy with other work gave 0.45-0.55x and
// 0.6-0.85x). From ~16 goroutines on the ring is ahead (128: 2-2.7x).
//
// One scheduler carries 2.3-3.5 million NOP requests per second
// (BenchmarkNop, 128 to 1024 goroutines), far beyond what one disk here does (~140k IOPS); a second
// scheduler on this 2-vCPU machine lowers read IOPS (0.74-0.93x), because
// its loop thread competes with the callers for the cores. Shard only
// with spare cores.
//
// Calls: ReadAt and friends wait for their completion. StartReadAt and
// StartWriteAt return a Call to Wait on later, so one goroutine can keep
// many requests in flight without a goroutine per request (diskio's
// StreamReader keeps its read-ahead this way, reading small buffers 64 KiB
// at a time: one request per 16 buffers of 4 KiB cost the loop, the kernel
// and the reader a sixteenth of the requests, completions and wake-ups,
// and the block layer would have merged the 16 anyway); requests started together
// in a Batch are submitted together, and Batch.WaitAll waits for all of
// them with one wake-up of the caller (diskio's ReadMany).
//
// In-flight work is bounded by Options.Entries (1,024 on io_uring, so that a
// batch of thousands of reads keeps the device's queue full; 256 on AIO);
// the CQ is twice that, so it never overflows. Requests beyond the bound wait in the loop's pending
// list (their callers wait as for any request); they never fail. Short reads and writes are resubmitted from where they stopped,
// EINTR and EAGAIN are retried, every other error goes to the one caller
// whose request failed (EINVAL on O_DIRECT files explained with the file's
// alignment). Requests and their completion channels are pooled: a read
// allocates nothing in steady state. A caller's buffer is referenced by its
// request until the completion is reaped, so it stays alive; the Go heap
// does not move objects. On O_DIRECT files buffers must be aligned (see
// internal/mem).
//
// Close refuses new requests, lets every accepted request complete, then
// releases the kernel queue and the eventfd, and the loop goroutine ends.
//
// Registered (fixed) buffers and files: the scheduler registers a 16 MiB
// arena (4 MiB where RLIMIT_MEMLOCK refuses 16) with io_uring (Options.FixedBuffers) and an empty file table
// (Options.FixedFiles). Memory from AllocBuffer lies in the arena, and reads
// and writes into it use READ_FIXED/WRITE_FIXED, chosen by address;
// RegisterFile puts an fd in the table. When the kernel or RLIMIT_MEMLOCK
// refuses, Fixed says so and why, and everything works without them.
//
// Tracing: Options.Tracer receives every system call and every request's
// timeline (enqueue, submit, complete, resume), on the caller's goroutine
// for requests. Without a tracer the clock is read once per batch on the
// loop (and twice per inline request), for the statistics.
//
// Statistics (Stats, ReadStats, StatsVar): always on, they count requests
// and bytes by operation and class, with queue and device time
// histograms, the requests in flight and queued, the loop's system calls
// and sleeps, and slow requests. Recording is a few atomic adds and no
// allocation: BenchmarkStatsCost, 4 KiB random reads from 128 goroutines,
// statistics on against off in alternating rounds, median IOPS ratio
// 0.99-1.01 (16-24 rounds; 0.95-1.02 in runs on a busy machine), CPU per
// read +0.7% to +6%. A first version
// that read the clock on the caller at enqueue cost 7% more CPU per read
// (4.96 against 4.64µs; a clock read costs ~50ns on the development VM),
// so the loop stamps requests when it takes them, once per batch.
//
// Slow requests (Options.SlowThreshold, default 1s; Options.OnSlow, or a
// Tracer that implements SlowTracer): a request in the kernel longer than
// the threshold is reported, naming its fd, op, offset, length and class
// and how long it has waited, then again at 2x, 4x... the threshold while
// it waits. The loop checks ages only when the oldest request is due, and
// sleeps in the kernel with a timeout that ends then (none when nothing is
// in flight); reports reach the callback on a goroutine of their own
// through a bounded channel (dropped and counted when full), so the loop
// never waits for them. TestSlowRequestReported (a late completion
// injected with Options.Faults) and TestSlowDiskThrottled (a loop device
// throttled to 4 reads/s by the blkio cgroup) see the first report within
// 1ms of the threshold.
//
// Classes (Class, SetClass, ReadAtClass..., Options.Classes): Latency
// requests (a WAL's writes and syncs, foreground reads) go out as they
// come; while any is queued or in flight, the Background requests in
// flight (compactions, scans) are bounded, the bound scaled so that their
// device time stays near ClassOptions.Goal (200µs), and the rest wait in
// the loop in order; each class may carry a kernel I/O priority
// (ClassOptions.Ioprio, none by default). Unclassified requests are
// scheduled as before. On the development VM the bound cut a synced
// writer's median commit beside 32 cold readers by a third (the readers
// kept ~0.7x), not its p99, which the virtio disk itself sets at ~4x
// with even two reads in flight (docs/2026-11-25-io-classes.md).
//
// Kernel queue failures that cannot happen by construction (EBADF on the
// ring, a dropped CQE with a CQ twice the in-flight bound) panic, as
// TigerBeetle does: continuing would hand callers buffers the kernel may
// still write.
//
// Page-cache attempts (ReadAtNowait, WriteAtNowait) are for buffered
// files: one preadv2/pwritev2 with RWF_NOWAIT on the caller's goroutine,
// which copies what the page cache holds and never waits for the disk;
// the caller sends the rest through ReadAt or WriteAt, where io_uring
// reads buffered files asynchronously (Linux 5.9+) without worker
// threads. They never touch the loop. When the caller expects a hit,
// attempts up to 64 KiB are raw system calls, so the runtime starts no
// thread for them even when the machine is busy (package diskio's
// PageCache mode uses them).
//
// Backends: io_uring (default), Linux AIO (asynchronous only for O_DIRECT
// files; NOP and fallocate run inline), and blocking (the os.File
// behaviour, baseline and last fallback). New falls back along
// uring -> aio -> blocking and keeps the reason (FallbackReason);
// DISKIO_BACKEND=uring|aio|blocking or Options.Backend forces one.
package sched
