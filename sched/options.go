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
	// then blocking. Default's scheduler takes it from DISKIO_BACKEND
	// (OptionsFromEnv).
	Backend Backend
	// Entries bounds the requests in flight in the kernel (default 1024
	// on io_uring, 256 on Linux AIO, whose contexts draw on the
	// system-wide fs.aio-max-nr). Callers beyond it wait; they never fail.
	Entries int
	// Spin is how long the loop keeps polling for new requests after its
	// last progress, when nothing is in flight, before it sleeps in the
	// kernel (default 20µs; negative: never spin): at most Spin of CPU
	// after the last request or completion, against the latency of a
	// sleep and a wake-up in the kernel (docs/scheduler.md). With
	// requests in flight the loop polls only a few rounds (microseconds)
	// before it sleeps: their completions wake it.
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
	// only once per batch, for its statistics (Stats). It changes no
	// path a request takes.
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
	// unbounded each (IORING_REGISTER_IOWQ_MAX_WORKERS), which run what
	// cannot complete without blocking (fsync, fallocate, unlink, writes
	// that extend a file, buffered writes). Default 4 (Default's
	// scheduler: DISKIO_IOWQ_MAX_WORKERS); negative: the kernel's limits
	// (4 x CPUs bounded). Fixed reports what the kernel accepted.
	//
	// Unless NoInline is set, it also bounds the callers that run such
	// work on their own threads instead of the workers (4 when
	// negative): syncs, fallocate, unlink, and the latency and
	// background classes' writes that would block. Which work runs
	// where is under "Bounds" in the package documentation.
	IOWQMaxWorkers int
	// Faults, if set, injects failures into every attempt a request
	// makes, on every path it takes (Path): between the loop and the
	// kernel queue, and between callers and their system calls. For
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

	// SetupFlags are extra IORING_SETUP_* flags for io_uring_setup(2)
	// (package uring's constants), for experiments: IORING_SETUP_SQPOLL
	// makes a kernel thread poll the submission queue, which spends up
	// to a core while requests arrive; IORING_SETUP_IOPOLL polls for
	// completions and needs O_DIRECT files on a device with poll queues;
	// SINGLE_ISSUER and DEFER_TASKRUN lock the loop to its thread. The
	// defaults need none of them. Where the kernel refuses them, New
	// falls back as it does for any io_uring setup failure (Fallback).
	SetupFlags uint32
}

// defaultEntries is the in-flight bound when Options.Entries is zero. On
// io_uring it is sized for batches of thousands of reads (ReadMany from
// many goroutines): the device's queue stays full while the next reads
// are already in the kernel (docs/notes/2026-11-28-design-figures.md). Linux
// AIO reserves twice its bound from the system-wide fs.aio-max-nr
// (65,536 by default), so it keeps 256.
func defaultEntries(b Backend) int {
	if b == AIO {
		return 256
	}
	return 1024
}
