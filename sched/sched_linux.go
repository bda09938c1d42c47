//go:build linux

package sched

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/mem"
)

// Backend names a kernel interface a Scheduler can drive.
type Backend string

const (
	Auto     Backend = ""         // uring, else aio, else blocking
	URing    Backend = "uring"    // io_uring
	AIO      Backend = "aio"      // Linux AIO: asynchronous only for O_DIRECT files
	Blocking Backend = "blocking" // pread/pwrite on the caller's goroutine: the os.File behaviour
)

// ErrClosed is returned for requests made after Close.
var ErrClosed = errors.New("sched: scheduler closed")

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
	// RingFlags are extra IORING_SETUP_* flags for the uring backend.
	// SINGLE_ISSUER and DEFER_TASKRUN bind the ring to one thread, so
	// they imply LockOSThread.
	RingFlags uint32
	// LockOSThread keeps the loop goroutine on one OS thread for its
	// whole life. Without it the uring loop locks itself before the
	// first write, sync or fallocate, so that io_uring keeps one worker
	// pool (see the package doc); reads alone leave it unlocked, because
	// the first runtime.LockOSThread in a process starts the runtime's
	// template thread, one thread over GOMAXPROCS+4.
	LockOSThread bool
	// Spin is how long the loop keeps polling for completions and new
	// requests after its last progress before it sleeps in the kernel
	// (default 20µs; negative: never spin). Sleeping and being woken
	// costs 10-25µs of latency on a VM; spinning costs at most Spin of
	// CPU after the last request or completion. 4 KiB random reads from
	// 50 goroutines got 4-11% more IOPS with 1-10 ms (Glommio's example
	// spins 10 ms) at 2.5-2.8x the CPU per read (README, Glommio).
	Spin time.Duration
	// NoInline disables the idle fast path: a request that arrives while
	// the scheduler has nothing queued or in flight is normally issued
	// by its caller with one blocking system call (what os.File does),
	// because waking the sleeping loop, and the loop waking the caller,
	// would cost two thread wake-ups. At most two requests are inline at
	// a time, so OS threads stay bounded.
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
	// writes that extend a file, buffered writes). Default 4, or
	// DISKIO_IOWQ_MAX_WORKERS; negative: the kernel's limits (4 x CPUs
	// bounded). Fixed reports what the kernel accepted.
	IOWQMaxWorkers int
	// Faults, if set, injects failures between the loop and the kernel
	// queue, for tests (see FaultInjector). It needs the uring or aio
	// backend, and turns the idle fast path off.
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
	// buffered (see Scheduler.ReportFallback), on the goroutine that
	// found it (so possibly on several at once). The process-wide scheduler (Default) reports to the
	// recorder of DISKIO_TRACE or diskio.StartTracing, in its summary.
	OnFallback func(Fallback)

	// Classes configure how requests of different classes are ordered
	// (see Class and ClassOptions); the zero value is the default policy.
	Classes ClassOptions

	// noStats turns statistics off, and with them the clock reads they
	// need (when there is no Tracer): for the benchmark that measures
	// what they cost.
	noStats bool
}

// FixedStatus says whether registered buffers and files are in use, and
// if not, why (for example RLIMIT_MEMLOCK, or a backend without them).
type FixedStatus struct {
	Buffers       bool
	BuffersReason string
	Files         bool
	FilesReason   string
	// Unregistered counts AllocBuffer calls the registered arena could
	// not serve (it was full), whose memory is therefore not registered.
	Unregistered uint64
	// Workers is the cap on io_uring's worker threads.
	Workers WorkerStatus
}

func (f FixedStatus) String() string {
	str := func(ok bool, reason string) string {
		if ok {
			return "yes"
		}
		return "no (" + reason + ")"
	}
	buffers := str(f.Buffers, f.BuffersReason)
	if f.Buffers && f.Unregistered > 0 {
		buffers += fmt.Sprintf(", but %d AllocBuffer calls did not fit in the arena and got unregistered memory (Options.FixedBuffers)", f.Unregistered)
	}
	return "fixed buffers: " + buffers + "; fixed files: " + str(f.Files, f.FilesReason) + "; " + f.Workers.String()
}

// Scheduler owns one kernel queue and the loop goroutine that
// drives it. Its methods are safe for concurrent use.
type Scheduler struct {
	backend Backend
	reason  string // why earlier backends in the chain were not used

	// state is the fdMutex-style reference count: the low bits count
	// callers inside a method, stateClosed marks Close.
	state atomic.Uint64

	// incoming is a lock-free stack of requests (linked by next) that
	// producers push and the loop takes whole, in one swap. sleeping is
	// set by the loop before it sleeps. Both are sequentially
	// consistent, so a producer either sees sleeping and wakes the loop,
	// or the loop sees incoming non-empty and does not sleep (the Dekker
	// pattern). Producers never block on it: every caller has at most
	// its own requests in it, and the loop bounds what is in the kernel.
	incoming atomic.Pointer[request]
	sleeping atomic.Bool
	efd      int
	efdMu    sync.RWMutex // efdOpen changes under the write lock
	efdOpen  bool

	// active counts requests handed to the loop and not yet returned;
	// inline counts the callers on the idle fast path (at most maxInline).
	active   atomic.Int64
	inline   atomic.Int32
	noInline bool
	tracer   Tracer
	faults   FaultInjector // Options.Faults, for the page-cache attempts (nowait_linux.go)

	// clock says requests are timed: for the statistics, or a Tracer.
	clock   bool
	statsOn bool
	stats   stats      // stats_linux.go
	classes classTable // class_linux.go

	slowThreshold time.Duration // slow_linux.go; 0: off
	slowCh        chan SlowIO   // to the reporting goroutine; nil: no one to report to

	arena        *arena      // registered fixed buffers, nil when not registered
	cache        bufferCache // freed buffers kept for reuse (cache_linux.go)
	fixed        FixedStatus
	workers      WorkerStatus  // set by the loop before New returns
	locked       atomic.Bool   // the loop is locked to its OS thread
	unregistered atomic.Uint64 // AllocBuffer calls the arena could not serve

	exited chan struct{}

	onFallback func(Fallback) // Options.OnFallback (fallback_linux.go)
}

const stateClosed = 1 << 63

// New starts a scheduler. The returned error says why the requested backend
// could not start; with Auto it is only returned if even blocking fails.
func New(opts Options) (*Scheduler, error) {
	if opts.Entries > 4096 {
		opts.Entries = 4096
	}
	if opts.Spin == 0 {
		opts.Spin = 20 * time.Microsecond
	}
	if opts.FixedFiles == 0 {
		opts.FixedFiles = 256
	}
	var err error
	if opts.IOWQMaxWorkers, err = iowqMaxWorkers(opts.IOWQMaxWorkers); err != nil {
		return nil, err
	}
	want := opts.Backend
	if want == Auto {
		want = Backend(os.Getenv("DISKIO_BACKEND"))
	}
	var chain []Backend
	switch want {
	case Auto:
		chain = []Backend{URing, AIO, Blocking}
	case URing, AIO, Blocking:
		chain = []Backend{want}
	default:
		return nil, fmt.Errorf("sched: unknown backend %q (want uring, aio or blocking)", want)
	}
	var reasons []string
	var errs []error
	for _, b := range chain {
		s, err := start(b, opts)
		if err == nil {
			s.reason = strings.Join(reasons, "; ")
			s.onFallback = opts.OnFallback
			s.reportStart()
			return s, nil
		}
		reasons = append(reasons, fmt.Sprintf("%s: %v", b, err))
		errs = append(errs, fmt.Errorf("%s: %w", b, err))
	}
	if len(errs) == 1 {
		return nil, fmt.Errorf("sched: backend %w", errs[0])
	}
	return nil, fmt.Errorf("sched: no backend could start: %w", errors.Join(errs...))
}

func start(b Backend, opts Options) (*Scheduler, error) {
	if opts.Entries <= 0 {
		opts.Entries = defaultEntries(b)
	}
	s := &Scheduler{backend: b, exited: make(chan struct{}), noInline: opts.NoInline || opts.Faults != nil, tracer: opts.Tracer, faults: opts.Faults}
	s.statsOn = !opts.noStats
	s.clock = opts.Tracer != nil || s.statsOn
	if b != Blocking {
		s.startSlow(opts)
	}
	if opts.Faults != nil && b == Blocking {
		return nil, errFaultsBlocking
	}
	if b != URing {
		s.fixed.BuffersReason = "only the io_uring backend registers buffers"
		s.fixed.FilesReason = "only the io_uring backend registers files"
		s.workers.Reason = "only io_uring has worker threads"
	}
	if b == Blocking {
		close(s.exited)
		return s, nil
	}
	// io_uring reads the eventfd (consuming its counter) and needs it
	// blocking, or the read fails at once with EAGAIN; AIO polls it and
	// drains it with a read that must not block.
	flags := unix.EFD_CLOEXEC
	if b == AIO {
		flags |= unix.EFD_NONBLOCK
	}
	efd, err := unix.Eventfd(0, flags)
	if err != nil {
		return nil, os.NewSyscallError("eventfd", err)
	}
	s.efd, s.efdOpen = efd, true
	ready := make(chan error, 1)
	go s.run(b, opts, ready)
	if err := <-ready; err != nil {
		unix.Close(efd)
		return nil, err
	}
	return s, nil
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

// defaultArena is the registered arena's size when Options.FixedBuffers
// is zero: 16 MiB holds ReadMany's 2,500 4 KiB reads in flight (50
// goroutines x 50 ranges; with 4 MiB 1,476 of them got unregistered
// memory), or 32 buffers of 512 KiB. Registering pins it, which costs
// 16 MiB of memory and ~15 ms in New; where RLIMIT_MEMLOCK refuses that
// (8 MiB is a common default for non-root users), 4 MiB is tried.
var defaultArena = [...]int{16 << 20, 4 << 20}

// setupFixed registers the fixed-buffer arena and the file table, on the
// loop's thread, and records why not when the kernel refuses.
func (s *Scheduler) setupFixed(q *uringQueue, opts Options) {
	switch {
	case opts.FixedBuffers < 0:
		s.fixed.BuffersReason = "disabled by Options.FixedBuffers"
	default:
		sizes := []int{opts.FixedBuffers}
		if opts.FixedBuffers == 0 {
			sizes = defaultArena[:]
		}
		var err error
		for _, size := range sizes {
			var a *arena
			if a, err = newArena(size); err == nil {
				if err = q.registerArena(a); err != nil {
					a.close()
				} else {
					s.arena, s.fixed.Buffers = a, true
					break
				}
			}
		}
		if !s.fixed.Buffers {
			s.fixed.BuffersReason = err.Error()
		}
	}
	switch {
	case opts.FixedFiles < 0:
		s.fixed.FilesReason = "disabled by Options.FixedFiles"
	default:
		if err := q.registerFileTable(opts.FixedFiles); err != nil {
			s.fixed.FilesReason = err.Error()
		} else {
			s.fixed.Files = true
		}
	}
}

// Fixed reports whether registered buffers and files are in use, and how
// many AllocBuffer calls fell back to unregistered memory so far.
func (s *Scheduler) Fixed() FixedStatus {
	st := s.fixed
	st.Unregistered = s.unregistered.Load()
	st.Workers = s.workers
	return st
}

// AllocBuffer returns n bytes of page-aligned memory for I/O (fit for
// O_DIRECT). With registered buffers it comes from the registered arena and
// requests that use it skip per-request page pinning; when the arena is
// exhausted or absent it is mapped separately, and works the same, only
// without that saving. Give it back with FreeBuffer.
//
// After Close it fails with ErrClosed. Memory handed out before Close stays
// valid until it is freed, after Close too: the arena is unmapped when the
// scheduler is closed and its last block is back.
func (s *Scheduler) AllocBuffer(n int) ([]byte, error) {
	if n <= 0 {
		return nil, fmt.Errorf("sched: AllocBuffer(%d): size must be positive", n)
	}
	// A caller inside keeps the loop, which closes the arena, from
	// exiting until the block is counted out.
	if !s.acquire() {
		return nil, ErrClosed
	}
	defer s.release()
	if s.arena != nil {
		b, err := s.arena.alloc(n)
		if err == nil {
			return b, nil
		}
		if err == errArenaClosed {
			return nil, ErrClosed
		}
		s.unregistered.Add(1) // reported by Fixed
	}
	return mem.Map(n)
}

// FreeBuffer returns memory from AllocBuffer (before or after Close). No
// request may still use it.
func (s *Scheduler) FreeBuffer(b []byte) error {
	if len(b) == 0 {
		return errors.New("sched: FreeBuffer of an empty slice")
	}
	if ours, err := s.arena.release(b); ours {
		return err
	}
	return mem.Unmap(b)
}

// RegisterFile adds fd to io_uring's registered file table, so requests
// on it skip the kernel's per-request file lookup. Call UnregisterFile
// before closing fd: the table holds its own reference to the file, and a
// new file given the same number must not inherit the slot. Requests on fd
// work whether or not this succeeds.
func (s *Scheduler) RegisterFile(fd int) error {
	if !s.fixed.Files {
		return errors.New("sched: no registered files: " + s.fixed.FilesReason)
	}
	r := getRequest()
	r.op, r.fd = opRegisterFile, int32(fd)
	_, err := s.control(r)
	return err
}

// UnregisterFile removes fd from the registered file table (a no-op when
// it is not there).
func (s *Scheduler) UnregisterFile(fd int) error {
	if !s.fixed.Files {
		return nil
	}
	r := getRequest()
	r.op, r.fd = opUnregisterFile, int32(fd)
	_, err := s.control(r)
	return err
}

// viaLoop hands r to the loop and waits until it is done.
func (s *Scheduler) viaLoop(r *request) {
	s.send(r)
	s.await(r)
}

// await waits for the loop to be done with r.
func (s *Scheduler) await(r *request) {
	<-r.wake
	s.active.Add(-1)
}

// send hands r to the loop.
func (s *Scheduler) send(r *request) { s.push(r, r, 1) }

// push puts a chain of n requests (head newest, tail oldest, linked by
// next) on the incoming stack, and wakes the loop only if it announced
// that it sleeps (the producer side of the sleep handshake).
func (s *Scheduler) push(head, tail *request, n int) {
	s.active.Add(int64(n))
	for {
		old := s.incoming.Load()
		tail.next = old
		if s.incoming.CompareAndSwap(old, head) {
			break
		}
	}
	if s.sleeping.Load() && s.sleeping.CompareAndSwap(true, false) {
		s.wakeLoop()
	}
}

// control sends a request that the loop handles itself.
func (s *Scheduler) control(r *request) (int, error) {
	if !s.acquire() {
		putRequest(r)
		return 0, ErrClosed
	}
	s.viaLoop(r)
	err := r.err
	putRequest(r)
	s.release()
	return 0, err
}

// Backend returns the kernel interface in use.
func (s *Scheduler) Backend() Backend { return s.backend }

// FallbackReason says why backends before the one in use were skipped, for
// example "uring: io_uring_setup: operation not permitted (...)"; empty
// when the first choice started.
func (s *Scheduler) FallbackReason() string { return s.reason }

var (
	defaultOnce  sync.Once
	defaultSched *Scheduler
	defaultErr   error
)

// Default returns the process-wide scheduler, started on first use with
// the default Options (DISKIO_BACKEND applies).
func Default() (*Scheduler, error) {
	defaultOnce.Do(func() { startDefault(nil) })
	return defaultSched, defaultErr
}

// startDefault starts the process-wide scheduler (under defaultOnce).
func startDefault(t Tracer) { defaultSched, defaultErr = New(Options{Tracer: t}) }

// acquire registers a caller; it fails once Close has begun.
func (s *Scheduler) acquire() bool {
	if s.state.Add(1)&stateClosed != 0 {
		s.release()
		return false
	}
	return true
}

func (s *Scheduler) release() { s.releaseN(1) }

// releaseN is n releases at once.
func (s *Scheduler) releaseN(n int) {
	if s.state.Add(-uint64(n)) == stateClosed {
		// Last caller out after Close: let the loop see it.
		s.wakeLoop()
	}
}

func (s *Scheduler) wakeLoop() {
	// A caller arriving after Close may still get here: the eventfd
	// must not be written once closed (its number may be reused).
	s.efdMu.RLock()
	defer s.efdMu.RUnlock()
	if !s.efdOpen {
		return
	}
	var one = [8]byte{1}
	var start int64
	if s.tracer != nil {
		start = Now()
	}
	for {
		_, err := unix.Write(s.efd, one[:])
		if err != unix.EINTR {
			break
		}
	}
	if s.tracer != nil {
		s.tracer.SyscallDone(SyscallEvent{Call: SysEventfdWrite, Start: start, End: Now()})
	}
}

func (s *Scheduler) traceRequest(r *request, inline bool) {
	ev := RequestEvent{
		Op: r.op, Fd: r.fd, Off: r.off, Len: len(r.buf), Backend: s.backend,
		Inline: inline, Fixed: r.fixed, Submits: r.submits, N: r.done, Err: r.err,
		Enqueue: r.tEnqueue, Submit: r.tSubmit, Complete: r.tComplete, Resume: Now(),
	}
	if inline {
		ev.Submit, ev.Complete = ev.Enqueue, ev.Resume
	}
	s.tracer.RequestDone(ev)
}

// do runs r through the scheduler and waits for its completion.
func (s *Scheduler) do(r *request) (int, error) {
	c, queue := s.admit(r)
	if queue {
		switch {
		case s.backend == AIO && (r.op == OpNop || r.op == OpFallocate):
			// AIO has no such opcodes: run them here, as os.File would.
			s.runInline(r)
			c.inline = true
		case !s.noInline && s.active.Load() == 0 && s.enterInline():
			s.runInline(r)
			s.inline.Add(-1)
			c.inline = true
		default:
			s.send(r)
		}
	}
	return c.Wait()
}

// runInline runs r on its caller with blocking system calls, and records
// it.
func (s *Scheduler) runInline(r *request) {
	if !s.statsOn {
		blockingDo(r, s.tracer)
		return
	}
	start := r.tEnqueue
	if start == 0 {
		start = Now() // no tracer: not read at enqueue
	}
	blockingDo(r, s.tracer)
	s.stats.inline.Add(1)
	s.stats.done(r, start, start, Now())
}

// maxInline is how many requests may take the idle fast path at once.
// Each holds an OS thread in pread, as os.File would, so it must stay a
// small constant: two lets a pair of goroutines run at os.File's speed
// (one alone made the second cross threads three times: 0.4x os.File at
// 2 goroutines, against 0.8-0.9x with two; four gained little more and
// cost two more threads).
const maxInline = 2

// enterInline takes one of the idle fast path's places, if one is free.
func (s *Scheduler) enterInline() bool {
	for {
		n := s.inline.Load()
		if n >= maxInline {
			return false
		}
		if s.inline.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// finishCall reports r to the tracer, returns its result and recycles it.
func (s *Scheduler) finishCall(r *request, inline bool) (int, error) {
	n, err := r.done, r.err
	if s.tracer != nil {
		s.traceRequest(r, inline)
	}
	detached := r.detached
	putRequest(r)
	if !detached {
		s.release()
	}
	return n, err
}

// Call is a request started with StartReadAt or StartWriteAt and not yet
// waited for: the way for one goroutine to keep many requests in flight
// without a goroutine per request. Wait must be called exactly once, and
// the buffer must stay untouched until then. A zero Call is not valid.
type Call struct {
	s      *Scheduler
	r      *request
	inline bool  // already done when started
	err    error // refused at start (ErrClosed)
}

// StartReadAt starts reading len(p) bytes at off from fd, like ReadAt,
// and returns without waiting. Requests started together are submitted
// together: starting many and then waiting for them is how a stream keeps
// the device busy.
func (s *Scheduler) StartReadAt(fd int, p []byte, off int64) Call {
	r := getRequest()
	r.op, r.fd, r.buf, r.off = OpRead, int32(fd), p, off
	return s.begin(r)
}

// StartWriteAt starts writing all of p at off to fd, like WriteAt, and
// returns without waiting.
func (s *Scheduler) StartWriteAt(fd int, p []byte, off int64) Call {
	r := getRequest()
	r.op, r.fd, r.buf, r.off = OpWrite, int32(fd), p, off
	return s.begin(r)
}

func (s *Scheduler) begin(r *request) Call {
	c, queue := s.admit(r)
	if queue {
		// Never the idle fast path: the caller wants to go on. Once
		// with the loop, the request keeps the loop (and Close) waiting
		// until it completes; the caller's reference need not wait for
		// its Wait, which may never come (a stream dropped).
		r.detached = true
		s.send(r)
		s.release()
	}
	return c
}

// admit starts a call on r; queue says r is for the loop (not refused,
// not already done on the blocking backend).
func (s *Scheduler) admit(r *request) (c Call, queue bool) {
	if !s.acquire() {
		putRequest(r)
		return Call{err: ErrClosed}, false
	}
	if s.tracer != nil {
		r.tEnqueue = Now()
	}
	if !r.classGiven {
		r.class = s.classes.of(r.fd)
	}
	if s.backend == Blocking {
		// Nothing runs asynchronously here: do it now, as os.File
		// would, and let Wait return the result.
		s.runInline(r)
		return Call{s: s, r: r, inline: true}, false
	}
	return Call{s: s, r: r}, true
}

// Batch gathers calls that reach the scheduler, and so the kernel,
// together: Submit hands all of them over at once, so they go out in one
// submission, where the block layer can merge neighbouring reads (a
// stream of small reads becomes fewer, larger requests to the device).
// Calls started in a batch must not be waited for before Submit. A Batch
// is for one goroutine; its zero value is not usable, see
// Scheduler.Batch.
type Batch struct {
	s           *Scheduler
	first, last *request // oldest first, linked by next
	n           int
	wait        *batchWait // for WaitAll; made on first use, then reused
	class       Class
	classGiven  bool // SetClass was called
}

// Batch returns an empty Batch for s.
func (s *Scheduler) Batch() Batch { return Batch{s: s} }

// StartReadAt adds a read to the batch; see Scheduler.StartReadAt.
func (b *Batch) StartReadAt(fd int, p []byte, off int64) Call {
	r := getRequest()
	r.op, r.fd, r.buf, r.off = OpRead, int32(fd), p, off
	r.class, r.classGiven = b.class, b.classGiven
	c, queue := b.s.admit(r)
	if queue {
		if b.wait == nil {
			b.wait = &batchWait{wake: make(chan struct{}, 1)}
			b.wait.left.Store(1)
		}
		b.wait.left.Add(1)
		r.group = b.wait
		r.detached = true // its reference goes at Submit (begin)
		if b.last == nil {
			b.first = r
		} else {
			b.last.next = r
		}
		b.last = r
		b.n++
	}
	return c
}

// Submit hands the batch's calls to the scheduler and empties the batch.
func (b *Batch) Submit() {
	if b.first == nil {
		return
	}
	// The incoming stack holds the newest first: push the chain
	// reversed, with one compare-and-swap.
	var head *request
	for r := b.first; r != nil; {
		next := r.next
		r.next = head
		head = r
		r = next
	}
	b.s.push(head, b.first, b.n)
	b.s.releaseN(b.n)
	b.first, b.last, b.n = nil, nil, 0
}

// WaitAll submits what is not submitted yet and waits until every call
// the batch started since the last WaitAll is complete, with one wake-up
// of the caller however many there are (waiting for each in turn would
// wake it once per completion). Each Call's Wait must still be called,
// and then returns at once.
func (b *Batch) WaitAll() {
	b.Submit()
	w := b.wait
	if w == nil {
		return
	}
	if w.left.Add(-1) != 0 {
		<-w.wake
	}
	// Every call is complete: no completion can touch left any more.
	w.left.Store(1)
}

// Ready reports whether Wait would return without blocking.
func (c Call) Ready() bool {
	return c.r == nil || c.inline || len(c.r.wake) > 0
}

// Wait waits for the call to complete and returns what ReadAt or WriteAt
// would have.
func (c Call) Wait() (int, error) {
	if c.r == nil {
		if c.err == nil {
			return 0, errors.New("sched: Wait on a zero Call")
		}
		return 0, c.err
	}
	if !c.inline {
		c.s.await(c.r)
	}
	return c.s.finishCall(c.r, c.inline)
}

// ReadAt reads len(p) bytes at off from fd, resubmitting short reads until
// p is full or the file ends (then n < len(p) and err is nil). p must stay
// untouched until ReadAt returns; on O_DIRECT files it must be aligned.
func (s *Scheduler) ReadAt(fd int, p []byte, off int64) (int, error) {
	r := getRequest()
	r.op, r.fd, r.buf, r.off = OpRead, int32(fd), p, off
	return s.do(r)
}

// WriteAt writes all of p at off to fd, resubmitting short writes.
func (s *Scheduler) WriteAt(fd int, p []byte, off int64) (int, error) {
	r := getRequest()
	r.op, r.fd, r.buf, r.off = OpWrite, int32(fd), p, off
	return s.do(r)
}

// Fsync flushes fd's data and metadata to stable storage.
func (s *Scheduler) Fsync(fd int) error {
	r := getRequest()
	r.op, r.fd = OpFsync, int32(fd)
	_, err := s.do(r)
	return err
}

// Fdatasync flushes fd's data, and the metadata needed to read it back.
func (s *Scheduler) Fdatasync(fd int) error {
	r := getRequest()
	r.op, r.fd = OpFdatasync, int32(fd)
	_, err := s.do(r)
	return err
}

// Fallocate is fallocate(2) through the scheduler.
func (s *Scheduler) Fallocate(fd int, mode uint32, off, length int64) error {
	r := getRequest()
	r.op, r.fd, r.mode, r.off, r.size = OpFallocate, int32(fd), mode, off, length
	_, err := s.do(r)
	return err
}

// Nop sends a request that does nothing through the whole path: the cost
// of the scheduler itself.
func (s *Scheduler) Nop() error {
	r := getRequest()
	r.op = OpNop
	_, err := s.do(r)
	return err
}

// Close stops accepting requests, waits for every request already accepted
// to complete (a started Call need not have been waited for: its Wait
// still returns its result after Close), then releases the kernel queue, the eventfd, the thread and
// the buffer cache. Requests made after Close fail with ErrClosed, as do
// AllocBuffer and GetBuffer. Memory from AllocBuffer or GetBuffer that a
// caller still holds stays valid until it is given back (FreeBuffer,
// PutBuffer), which frees it; the registered arena is unmapped once its
// last block is back.
func (s *Scheduler) Close() error {
	for {
		old := s.state.Load()
		if old&stateClosed != 0 {
			return ErrClosed
		}
		if s.state.CompareAndSwap(old, old|stateClosed) {
			break
		}
	}
	if s.backend != Blocking {
		s.wakeLoop()
	}
	<-s.exited
	s.closeCache()
	if s.backend != Blocking {
		s.efdMu.Lock()
		defer s.efdMu.Unlock()
		s.efdOpen = false
		return os.NewSyscallError("close", unix.Close(s.efd))
	}
	return nil
}

// finish records the kernel's result res for r and says whether r is done
// (false: resubmit the remainder).
func finish(r *request, res int32) bool {
	if res < 0 {
		switch errno := syscall.Errno(-res); errno {
		case unix.EINTR, unix.EAGAIN:
			return false // retry as is
		case unix.EINVAL:
			if r.op == OpRead && r.done > 0 {
				// The remainder of a short read was refused: on
				// an O_DIRECT file a short read ends at end of
				// file, which need not be aligned, and a read from
				// an unaligned offset is EINVAL. It was the end.
				return true
			}
			if r.op == OpRead || r.op == OpWrite {
				r.err = explainEINVAL(r)
				return true
			}
			r.err = errno
			return true
		default:
			r.err = failed(r, errno)
			return true
		}
	}
	switch r.op {
	case OpRead, OpWrite:
		r.done += int(res)
		if r.done >= len(r.buf) {
			return true
		}
		if res == 0 {
			if r.op == OpWrite {
				r.err = errShortWrite
			}
			return true // a read of 0 bytes: end of file
		}
		return false // short: go on from r.done
	}
	return true
}

var errShortWrite = errors.New("sched: write made no progress (0 bytes written)")

func explainEINVAL(r *request) error {
	a, err := dio.ForFD(int(r.fd))
	if err != nil {
		return syscall.EINVAL
	}
	rem := r.remaining()
	return dio.ExplainEINVAL(r.op.String(), r.off+int64(r.done), len(rem), uintptr(unsafe.Pointer(unsafe.SliceData(rem))), a)
}
