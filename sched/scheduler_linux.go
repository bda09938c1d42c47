//go:build linux

package sched

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

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
	// callerSlots bound the requests that run on their callers' threads
	// at once, one thread a slot (caller_linux.go): maxInline for the
	// idle fast path and latency-class syncs, then those for work
	// io_uring would hand to a worker, which slotQueue queues for.
	// callerLat is what the class policy learns of the latency-class
	// ones.
	active       atomic.Int64
	callerSlots  []callerSlot
	slotQueue    slotQueue
	callerLat    callerLatency
	transfers    transferSlots // the backend cannot wait for a transfer without a thread (transfer_linux.go)
	watch        callerWatch
	noInline     bool
	syncOnCaller bool // latency-class syncs run on their callers
	workOnCaller bool // what io_uring would hand to a worker runs on its caller
	tracer       Tracer

	ringUnlink bool // the ring has IORING_OP_UNLINKAT (Unlinkat); set before New returns
	// calls makes the system calls of callers' goroutines, with
	// Options.Faults and Options.Tracer as decorators (syscall_linux.go).
	calls sysCaller

	stats stats // stats_linux.go

	flushes flushes  // Files' syncs shared by a filesystem (flush_linux.go)
	onDisk  diskDirs // directories whose Files need no fstatfs (OpenPath)

	slowThreshold time.Duration // slow_linux.go; 0: off
	slowCh        chan SlowIO   // to the reporting goroutine; nil: no one to report to

	arena        *arena      // registered fixed buffers, nil when not registered
	cache        bufferCache // freed buffers kept for reuse (buffercache_linux.go)
	fixed        FixedStatus
	workers      WorkerStatus  // set by the loop before New returns
	locked       atomic.Bool   // the loop is locked to its OS thread
	unregistered atomic.Uint64 // AllocBuffer calls the arena could not serve

	exited chan struct{}
	baton  chan struct{} // the wake-up relay hands the loop its P back (relay_linux.go)

	onFallback func(Fallback) // Options.OnFallback (fallback_linux.go)

	// nowaitWriteRefusal is the errno with which the kernel refused a
	// File's pwritev2(RWF_NOWAIT) (ext4 refuses them all), or 0: the
	// scheduler's later Files are refused without a system call.
	nowaitWriteRefusal atomic.Uint32
}

const stateClosed = 1 << 63

// New starts a scheduler configured by opts alone (it reads no
// environment; OptionsFromEnv does). The returned error says why the
// requested backend could not start; with Auto it is only returned if
// even blocking fails.
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
	opts.IOWQMaxWorkers = iowqMaxWorkers(opts.IOWQMaxWorkers)
	want := opts.Backend
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
	s := &Scheduler{backend: b, exited: make(chan struct{}), baton: make(chan struct{}, 1), transfers: newTransferSlots(), noInline: opts.NoInline, tracer: opts.Tracer, calls: newSysCaller(opts)}
	s.syncOnCaller = !s.noInline && !opts.Classes.Off && b != Blocking
	s.workOnCaller = !s.noInline && b == URing
	n := maxInline
	if s.workOnCaller {
		n += callerWorkers(opts.IOWQMaxWorkers)
		s.slotQueue.maxWrites = max(n-maxInline-1, 1)
	}
	s.callerSlots = make([]callerSlot, n)
	for i := maxInline; i < n; i++ {
		s.callerSlots[i].blocking = true
	}
	if b != Blocking {
		s.startSlow(opts)
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
	efd, err := sys.Eventfd(0, flags)
	if err != nil {
		return nil, os.NewSyscallError("eventfd", err)
	}
	s.efd, s.efdOpen = efd, true
	ready := make(chan error, 1)
	go s.run(b, opts, ready)
	if err := <-ready; err != nil {
		sys.Close(efd)
		return nil, err
	}
	return s, nil
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
// the Options OptionsFromEnv returns (the environment variables of the
// package documentation apply), and the error that kept it from starting.
func Default() (*Scheduler, error) {
	defaultOnce.Do(func() { startDefault(nil) })
	return defaultSched, defaultErr
}

// startDefault starts the process-wide scheduler (under defaultOnce).
func startDefault(t Tracer) {
	opts, err := OptionsFromEnv()
	if err != nil {
		defaultErr = err
		return
	}
	opts.Tracer = t
	defaultSched, defaultErr = New(opts)
}

// Close stops accepting requests, waits for every request already accepted
// to complete (a started Call need not have been waited for: its Wait
// still returns its result after Close), then releases the kernel queue,
// the eventfd, the thread and the buffer cache. Requests made after Close
// fail with ErrClosed, as does AllocBuffer. Memory from AllocBuffer that a
// caller still holds stays valid until FreeBuffer gives it back, which
// frees it; the registered arena is unmapped once its last block is back.
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
		return os.NewSyscallError("close", sys.Close(s.efd))
	}
	return nil
}
