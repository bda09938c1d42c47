//go:build linux

package trace

import (
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/diskio-go/diskio/sched"
)

// Config sizes a Recorder. The zero value keeps a timeline of the last
// 65,536 records (4 MiB) and takes no stacks. Everything else a Recorder
// keeps, the totals behind the summary and the profiles, covers the whole
// run in fixed memory. DISKIO_TRACE sets these from the environment (see
// the package documentation): DISKIO_TRACE_RECORDS, DISKIO_TRACE_STACKS
// and DISKIO_TRACE_STACK_TABLE.
type Config struct {
	// Records is the timeline ring's size in records (64 bytes each),
	// rounded up to a power of two; default 65536. Each request and each
	// system call is one record. When it is full the oldest records are
	// overwritten and counted as dropped, so the timeline (WriteChrome,
	// WriteJSONLines) covers the last Records records; the summary and
	// the profiles do not depend on it.
	Records int
	// StackEvery samples the caller's stack on every StackEvery-th
	// request (0: never). The I/O-wait profile needs stacks; each
	// sample costs a runtime.Callers (about a microsecond).
	StackEvery int
	// Stacks is the number of distinct stacks the wait profile keeps
	// (default 4096, about 300 bytes each, rounded up to a power of two).
	// Samples are added to their stack's entry in place, so the profile
	// covers the whole run; a sample whose stack is new once the table is
	// full is dropped and counted (Snapshot.StacksDropped).
	Stacks int
	// Paused makes the recorder start paused (see Pause): attach it to a
	// scheduler and record only while something, such as the HTTP
	// handler, captures.
	Paused bool
}

// Default sizes.
const (
	DefaultRecords = 1 << 16
	DefaultStacks  = 4096
)

// Recorder keeps the scheduler's events: a timeline of the latest in a
// preallocated ring, and totals of all of them (per op and size, per
// system call, per sampled stack) counted in place. It implements
// sched.Tracer: recording takes no lock and, once each op and size class
// has been seen, allocates nothing; a request costs one ticket (an atomic
// add), one compare-and-swap and eight atomic stores into one cache line
// for the timeline, and about six atomic adds for the totals. Its methods
// are safe for concurrent use, and snapshots may be taken while it
// records.
type Recorder struct {
	active     atomic.Int32 // > 0: recording (see Pause, Resume)
	recs       *ring
	tot        totals
	stacks     *stackTable
	stackEvery uint64
	requests   atomic.Uint64 // request counter for stack sampling
	born       int64         // sched.Now at New
	fallbacks  fallbacks
}

var _ sched.FallbackTracer = (*Recorder)(nil)

// New returns a Recorder with its memory allocated: the ring, and the
// stack table with StackEvery.
func New(cfg Config) *Recorder {
	if cfg.Records <= 0 {
		cfg.Records = DefaultRecords
	}
	if cfg.Stacks <= 0 {
		cfg.Stacks = DefaultStacks
	}
	r := &Recorder{recs: newRing(cfg.Records), born: sched.Now()}
	if cfg.StackEvery > 0 {
		r.stackEvery = uint64(cfg.StackEvery)
		r.stacks = newStackTable(cfg.Stacks)
	}
	if !cfg.Paused {
		r.active.Store(1)
	}
	return r
}

// Pause stops recording until a matching Resume. Pauses and resumes
// nest: the recorder records while resumes outnumber pauses (a recorder
// made with Config.Paused starts one pause down). A paused recorder still
// costs the scheduler its clock reads and calls, one atomic load each.
func (r *Recorder) Pause() { r.active.Add(-1) }

// Resume undoes one Pause.
func (r *Recorder) Resume() { r.active.Add(1) }

// Record kinds, in the low bits of a record's first word.
const (
	kindSyscall = 1
	kindRequest = 2
)

// SyscallDone records one system call.
func (r *Recorder) SyscallDone(ev sched.SyscallEvent) {
	if r.active.Load() <= 0 {
		return
	}
	s, t := r.recs.claim()
	r.tot.syscall(&ev, t)
	if s == nil {
		return
	}
	meta := uint64(kindSyscall) | uint64(ev.Call)<<2
	if ev.Wait {
		meta |= 1 << 8
	}
	s.w[0].Store(meta)
	s.w[1].Store(uint64(ev.Start))
	s.w[2].Store(uint64(ev.End))
	s.w[3].Store(uint64(ev.Submitted))
	s.w[4].Store(uint64(ev.Reaped))
	s.publish(t)
}

// Request record layout, first word: kind 0-1, op 2-5, backend 6-7,
// inline 8, fixed 9, submits 10-17, errno 18-31, fd 32-63. Then offset,
// len|n<<32, and the four timestamps.
const (
	errnoBits = 14
	// ErrnoOther stands for an error that is not a system error number
	// (or is too large to keep).
	ErrnoOther syscall.Errno = 1<<errnoBits - 1
)

var backendNames = [...]sched.Backend{0: "", 1: sched.URing, 2: sched.AIO, 3: sched.Blocking}

func backendCode(b sched.Backend) uint64 {
	// A switch, not the map: no hashing on the hot path.
	switch b {
	case sched.URing:
		return 1
	case sched.AIO:
		return 2
	case sched.Blocking:
		return 3
	}
	return 0
}

// errnoOf finds the errno in err without allocating: sched reports
// syscall.Errno values, possibly wrapped (an EINVAL explained).
func errnoOf(err error) uint64 {
	for i := 0; err != nil && i < 8; i++ {
		if e, ok := err.(syscall.Errno); ok {
			return uint64(min(e, ErrnoOther))
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			break
		}
		err = u.Unwrap()
	}
	if err == nil {
		return 0
	}
	return uint64(ErrnoOther)
}

func sat32(n int) uint64 { return uint64(min(max(n, 0), 1<<32-1)) }

// RequestDone records one request, on its caller's goroutine, and every
// StackEvery-th time the caller's stack.
func (r *Recorder) RequestDone(ev sched.RequestEvent) {
	if r.active.Load() <= 0 {
		return
	}
	s, t := r.recs.claim()
	r.tot.request(&ev, t)
	if s != nil {
		meta := uint64(kindRequest) | uint64(ev.Op&15)<<2 | backendCode(ev.Backend)<<6 |
			uint64(min(max(ev.Submits, 0), 255))<<10 | errnoOf(ev.Err)<<18 | uint64(uint32(ev.Fd))<<32
		if ev.Inline {
			meta |= 1 << 8
		}
		if ev.Fixed {
			meta |= 1 << 9
		}
		s.w[0].Store(meta)
		s.w[1].Store(uint64(ev.Off))
		s.w[2].Store(sat32(ev.Len) | sat32(ev.N)<<32)
		s.w[3].Store(uint64(ev.Enqueue))
		s.w[4].Store(uint64(ev.Submit))
		s.w[5].Store(uint64(ev.Complete))
		s.w[6].Store(uint64(ev.Resume))
		s.publish(t)
	}
	if r.stackEvery != 0 && r.requests.Add(1)%r.stackEvery == 0 {
		r.sampleStack(ev.Op, ev.Len, ev.Resume-ev.Enqueue)
	}
}

// sampleStack adds the caller's stack to the table. Frames of the
// scheduler itself are dropped when profiles are built, not here, where
// only PCs are known.
func (r *Recorder) sampleStack(op sched.Op, n int, wait int64) {
	var pcs [maxDepth]uintptr
	depth := runtime.Callers(2, pcs[:]) // skip runtime.Callers and sampleStack
	r.stacks.add(stackKey(op, n), pcs[:depth], uint64(max(wait, 0)))
}
