package sched

import (
	"time"
)

// Backend names a kernel interface a Scheduler can drive.
type Backend string

const (
	Auto     Backend = ""         // uring, else aio, else blocking
	URing    Backend = "uring"    // io_uring
	AIO      Backend = "aio"      // Linux AIO: asynchronous only for O_DIRECT files
	Blocking Backend = "blocking" // pread/pwrite on the caller's goroutine: the os.File behaviour
)

// Options configure a Scheduler. The zero value is a sane default.
type Options struct {
	// Backend forces a kernel interface; Auto tries uring, then aio,
	// then blocking. The DISKIO_BACKEND environment variable, when set,
	// applies to Default and to Auto.
	Backend Backend
	// Entries bounds the requests in flight in the kernel (default 1024
	// on io_uring, 256 on Linux AIO, whose contexts draw on the
	// system-wide fs.aio-max-nr). Callers beyond it wait; they never fail.
	Entries int
	// Spin is how long the loop keeps polling for new requests after its
	// last progress, when nothing is in flight, before it sleeps in the
	// kernel (default 20µs; negative: never spin). Sleeping and being
	// woken costs 10-25µs of latency on a VM; spinning costs at most Spin
	// of CPU after the last request or completion (docs/scheduler.md has
	// what longer spins gave). With requests in flight the loop polls
	// only a few rounds (microseconds) before it sleeps: their
	// completions wake it.
	Spin time.Duration
	// NoInline disables the idle fast path: a request that arrives while
	// the scheduler has nothing queued or in flight is normally issued
	// by its caller with one blocking system call (what os.File does),
	// because waking the sleeping loop, and the loop waking the caller,
	// would cost two thread wake-ups. It also sends latency-class syncs
	// through the loop: with classes on (ClassOptions), a Latency
	// Fdatasync or Fsync is otherwise made by its caller whatever is in
	// flight (a sync holds a thread while the disk flushes either way;
	// on the caller it skips two hand-offs through the loop). At most
	// two such requests are inline at a time, so OS threads stay bounded.
	// On io_uring it also sends through the ring what would otherwise run
	// on its caller because the ring would hand it to a worker thread
	// (see IOWQMaxWorkers). Inline requests are watched for slowness
	// (SlowThreshold) like the others.
	NoInline bool
	// Tracer, if set, receives every system call and every request's
	// timeline (see Tracer). Without one the scheduler reads the clock
	// only once per batch, for its statistics (Stats).
	Tracer Tracer
	// FixedBuffers is the size of the memory registered with io_uring as
	// a fixed buffer (default 16 MiB, or 4 MiB where RLIMIT_MEMLOCK
	// refuses that; negative: none). AllocBuffer hands
	// it out in power-of-two blocks of at least 4 KiB, or, when no such
	// block is left, n bytes (page-rounded) from the arena's unused end,
	// so an arena sized for one buffer holds it; reads and writes into
	// it use READ_FIXED/WRITE_FIXED.
	FixedBuffers int
	// FixedFiles is the size of io_uring's registered file table
	// (default 256; negative: none); see RegisterFile.
	FixedFiles int
	// IOWQMaxWorkers caps io_uring's worker threads, bounded and
	// unbounded each (IORING_REGISTER_IOWQ_MAX_WORKERS): the threads
	// that run what cannot complete without blocking (fsync, fallocate,
	// unlink, writes that extend a file, buffered writes). Default 4, or
	// DISKIO_IOWQ_MAX_WORKERS; negative: the kernel's limits (4 x CPUs
	// bounded). Fixed reports what the kernel accepted.
	//
	// Unless NoInline is set, syncs, fallocate and unlink do not go to
	// the workers, nor do writes of the latency and background classes
	// (SetClass) that would block: they run on their caller's thread, as
	// os.File runs them, and this is how many such calls run at once
	// (the default 4 when negative); the others wait, parked, and a
	// latency-class one is next (started Calls and Batches, whose
	// callers go on, still use the workers). Such a write goes to the
	// ring with RWF_NOWAIT and comes back to its caller only if the
	// kernel would block (an O_DIRECT overwrite of written blocks
	// completes in the ring). Through a worker the work held a thread
	// too, and each handoff through the loop waited for a P; when
	// nothing goes to a worker, the loop never locks itself to its
	// thread, which spares the runtime's template thread as well.
	// Unclassified writes that would block still go to the workers,
	// which serve many writers of one file with syncs better
	// (sched/caller_linux.go has the measurements), and once one has,
	// the rest of such work goes there too: the pool exists, and callers
	// would add threads beside it.
	IOWQMaxWorkers int
	// Faults, if set, injects failures into every attempt a request
	// makes, on every path it takes (Path): between the loop and the
	// kernel queue, and before the system calls made on callers. For
	// tests (see FaultInjector); it changes no path a request takes.
	Faults FaultInjector

	// SlowThreshold is how long a request may be in the kernel before
	// it is reported as slow (OnSlow, a SlowTracer, Stats.Slow), and
	// reported again each time its wait doubles. Default
	// DefaultSlowThreshold (1s); negative: no detection. Not on the
	// blocking backend, whose requests are system calls of their
	// callers.
	SlowThreshold time.Duration
	// OnSlow, if set, is called with each slow-request report, on a
	// goroutine of its own, one report at a time: it may block or log,
	// while further reports wait (64 at most; beyond that they are
	// dropped and counted in Stats.Slow.Dropped). Reports made before
	// Close may arrive after it returns.
	OnSlow func(SlowIO)
	// OnFallback, if set, is called once for each Fallback: before New
	// returns if the scheduler runs on a later backend than its first
	// choice, and for each file that asked for O_DIRECT on it and runs
	// buffered, on the goroutine that found it. The process-wide
	// scheduler (Default) reports to the recorder of DISKIO_TRACE or
	// diskio.StartTracing, in its summary.
	OnFallback func(Fallback)

	// Classes configure how requests of different classes are ordered
	// (see Class and ClassOptions); the zero value is the default policy.
	Classes ClassOptions

	// ringFlags are extra IORING_SETUP_* flags (schedlink.SetRingFlags),
	// for the testbench's SQPOLL and IOPOLL rows and tests of what the
	// kernel refuses; SINGLE_ISSUER and DEFER_TASKRUN lock the loop to
	// its thread.
	ringFlags uint32

	// noStats turns statistics off, and with them the clock reads they
	// need (when there is no Tracer): for the benchmark that measures
	// what they cost.
	noStats bool
}

// defaultEntries is the in-flight bound when Options.Entries is zero. On
// io_uring it is sized for a batch of thousands of reads (ReadMany from
// 50 goroutines x 50 ranges): with 256 slots such reads waited ~30 ms for
// a slot and got 0.6-0.7x of fio's IOPS at the same depth; with 1,024 the
// device's queue (nr_requests 256 here) stays full while the next reads
// are already in the kernel. Linux AIO reserves twice its bound from the
// system-wide fs.aio-max-nr (65,536), so it keeps 256.
func defaultEntries(b Backend) int {
	if b == AIO {
		return 256
	}
	return 1024
}
