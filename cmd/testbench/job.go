//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/internal/seccomp"
	"github.com/diskio-go/diskio/sched"
)

// Job is one run: a workload through one backend at one concurrency.
type Job struct {
	Group   string // table section; rows of a group share a baseline
	Label   string // row name; default: the backend
	Base    bool   // the group's baseline for ratios (default: its os.File row)
	Backend string // os.File, uring, aio, blocking
	RW      string // randread, randwrite, read, write, mixed
	BS      int    // bytes per operation
	G       int    // goroutines
	Direct  bool   // O_DIRECT
	Fsync   string // none, each, end, dsync, group
	Mix     int    // mixed: percent reads

	Fallocate bool  // write: preallocate the file first
	Region    int64 // random offsets fall in [0, Region) (0: the whole file)
	Warm      bool  // read [0, Region) into the page cache first (buffered)
	Limit     int64 // write: bytes to write at most (0: the file size)

	// diskio only
	Stream    bool   // read/write through StreamReader/StreamWriter
	Buffer    int    // stream buffer size
	ReadAhead int    // stream buffers in flight
	Fixed     bool   // registered buffers and files
	RingFlags uint32 // extra IORING_SETUP_* flags (glommio-scan's SQPOLL and IOPOLL rows)
	Entries   int
	NoInline  bool
	Spin      time.Duration // sched.Options.Spin (0: the default)

	// Untraced: neither side is instrumented (no Tracer for diskio, no
	// call count for os.File) unless -trace asks; syscalls/op is then the
	// kernel's count of read system calls (/proc/self/io syscr), which
	// io_uring's reads do not add to. For rows whose operation is one
	// short system call (page-cache hits), where a Tracer's two clock
	// reads per call would be a visible share of what is measured.
	Untraced bool `json:",omitempty"`
	// CountSyscalls: count the run's system calls with perf events on
	// the raw_syscalls:sys_enter tracepoint (every thread, the Go
	// runtime's futexes included) instead of as Untraced says; a run
	// where they cannot be opened reports none.
	CountSyscalls bool `json:",omitempty"`

	// Duration is the row's measured time in all, split evenly over the
	// rounds (-rounds); -duration overrides it.
	Duration time.Duration

	// A custom measurement (custom.go): its name, its own parameter,
	// and a directory of the preset's for its files.
	Custom  string `json:",omitempty"`
	Variant string `json:",omitempty"`
	Dir     string `json:",omitempty"`
}

func (j Job) label() string {
	if j.Label != "" {
		return j.Label
	}
	return j.Backend
}

func (j Job) diskio() bool { return j.Backend != "os.File" }

func (j Job) writes() bool { return j.RW != "randread" && j.RW != "read" }

// target is what a run drives: an *os.File or a *diskio.File.
type target interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	Datasync() error
	Sync() error
	Preallocate(off, n int64) error
	Close() error
}

// osTarget is os.File, counting its system calls (one per call: os.File
// retries only short or interrupted ones, which a healthy disk does not
// produce).
type osTarget struct {
	f        *os.File
	calls    atomic.Int64
	untraced bool // Job.Untraced: reads are not counted
}

func (t *osTarget) ReadAt(p []byte, off int64) (int, error) {
	if !t.untraced {
		t.calls.Add(1)
	}
	return t.f.ReadAt(p, off)
}

func (t *osTarget) WriteAt(p []byte, off int64) (int, error) {
	t.calls.Add(1)
	return t.f.WriteAt(p, off)
}

func (t *osTarget) Datasync() error {
	t.calls.Add(1)
	if err := unix.Fdatasync(int(t.f.Fd())); err != nil {
		return &os.PathError{Op: "fdatasync", Path: t.f.Name(), Err: err}
	}
	return nil
}

func (t *osTarget) Sync() error {
	t.calls.Add(1)
	return t.f.Sync()
}

func (t *osTarget) Preallocate(off, n int64) error {
	if err := unix.Fallocate(int(t.f.Fd()), 0, off, n); err != nil {
		return &os.PathError{Op: "fallocate", Path: t.f.Name(), Err: err}
	}
	return nil
}

func (t *osTarget) Close() error { return t.f.Close() }

// env is what every run shares: the data file, the directory, the options
// of the whole invocation.
type env struct {
	dir      string
	path     string // the read data file
	size     int64
	userFile bool // -file: never written
	direct   bool // O_DIRECT works in dir
	fl       *files
	tracer   sched.Tracer // -trace, or nil
	prepared bool         // the page cache was set up by the parent process
	seccomp  seccomp.Set  // -seccomp: what each isolated run's process refuses
	prog     *progress
	busy     string // -busy (busy.go)
}

// run executes j and returns its result (with Error set if it failed) and
// its latency histogram.
func (e *env) run(ctx context.Context, j Job) (Result, *bench.Histogram) {
	h := new(bench.Histogram)
	r := e.result(j)
	stop, err := startBusy(e.busy)
	if err != nil {
		r.Error = err.Error()
		return r, h
	}
	if err := e.runJob(ctx, j, &r, h); err != nil {
		r.Error = err.Error()
	}
	r.BusyPerS = stop()
	return r, h
}

func (e *env) runJob(ctx context.Context, j Job, r *Result, h *bench.Histogram) error {
	if j.Custom == "" {
		return e.exec(ctx, j, r, h)
	}
	c, err := customOf(j)
	if err != nil {
		return err
	}
	if !e.prepared {
		if err := e.prepare(j); err != nil {
			return err
		}
	}
	done := e.prog.start(r.Group+": "+r.Label, j.Duration)
	defer done()
	return c.run(ctx, e, j, r, h)
}

// result is j's row before it runs: what the job is, not what it measured.
func (e *env) result(j Job) Result {
	r := Result{Group: j.Group, Label: j.label(), Backend: j.Backend, Workload: j.RW, Goroutines: j.G,
		BlockSize: j.BS, Direct: j.Direct && e.direct, Fsync: j.Fsync, Base: j.Base}
	if j.Stream && j.diskio() {
		r.Stream = fmt.Sprintf("%s x %d", sizeName(int64(j.Buffer)), j.ReadAhead)
	}
	if j.Direct && !e.direct {
		r.Note = "buffered: no O_DIRECT here"
	}
	return r
}

// prepare sets the page cache up for a run that reads the data file: cold
// (evicted), or warm over the job's region. It blocks in long system calls,
// so an isolated run has its parent do it (see isolate.go).
func (e *env) prepare(j Job) error {
	if j.Custom != "" {
		c, err := customOf(j)
		if err != nil || c.prepare == nil {
			return err
		}
		return c.prepare(e, j)
	}
	if j.RW == "write" || j.writes() && e.userFile {
		return nil
	}
	if err := dropCache(e.path); err != nil {
		return err
	}
	if j.Warm {
		span := e.size
		if j.Region > 0 {
			span = min(j.Region, e.size)
		}
		return warm(e.path, span)
	}
	return nil
}

func (e *env) exec(ctx context.Context, j Job, r *Result, h *bench.Histogram) error {
	direct := j.Direct && e.direct
	path, span := e.path, e.size
	if j.Region > 0 {
		span = min(j.Region, e.size)
	}
	switch {
	case j.RW == "write":
		f, err := e.fl.create(e.dir, "testbench-w-*.dat")
		if err != nil {
			return err
		}
		f.Close()
		path = f.Name()
		defer e.fl.remove(path)
		span = e.size
		if j.Limit > 0 {
			span = j.Limit
		}
	case j.writes() && e.userFile:
		return errors.New("-file is never written: write workloads need the temporary file (drop -file)")
	default:
		if !e.prepared {
			if err := e.prepare(j); err != nil {
				return err
			}
		}
	}
	per := span / int64(j.G) / int64(j.BS) * int64(j.BS) // sequential: each goroutine's share
	if (j.RW == "read" || j.RW == "write") && per < int64(j.BS) {
		return fmt.Errorf("%s of %s over %d goroutines leaves less than one block each", sizeName(span), j.RW, j.G)
	}
	if span < int64(j.BS) {
		return fmt.Errorf("block size %s is larger than the file (%s)", sizeName(int64(j.BS)), sizeName(span))
	}

	flags := os.O_RDONLY
	if j.writes() {
		flags = os.O_RDWR
	}
	if j.Fsync == "dsync" {
		flags |= unix.O_DSYNC
	}
	untraced := j.Untraced && e.tracer == nil
	var (
		t       target
		df      *diskio.File
		s       *sched.Scheduler
		osT     *osTarget
		counter *syscallCounter
	)
	if !j.diskio() {
		if direct {
			flags |= unix.O_DIRECT
		}
		f, err := os.OpenFile(path, flags, 0o600)
		if err != nil {
			return err
		}
		osT = &osTarget{f: f, untraced: untraced}
		t = osT
	} else {
		counter = &syscallCounter{next: e.tracer}
		opts := sched.Options{Backend: sched.Backend(j.Backend), Entries: j.Entries, NoInline: j.NoInline, Spin: j.Spin, Tracer: counter}
		if untraced {
			opts.Tracer = nil
		}
		if j.Backend == "uring" && j.RingFlags != 0 {
			opts.SetupFlags = j.RingFlags
		}
		// The callers' buffers, and a stream's ReadAhead+1 buffers
		// (small ones read 64 KiB at a time, up to two reads more);
		// the arena hands out power-of-two blocks.
		need := pow2(j.G * j.BS)
		if j.Stream {
			need += pow2(j.Buffer)*(j.ReadAhead+1) + 128<<10
		}
		if j.Fixed {
			opts.FixedBuffers = max(4<<20, (need+mem.PageSize-1)/mem.PageSize*mem.PageSize)
		}
		// Otherwise the scheduler's defaults, as a program gets them:
		// a registered arena the callers' buffers are not in, and the
		// registered file table.
		var err error
		if s, err = sched.New(opts); err != nil {
			return fmt.Errorf("%s: %w", j.Backend, err)
		}
		defer s.Close()
		mode := diskio.PageCache
		if direct {
			mode = diskio.DirectRequired
		}
		if df, err = diskio.OpenFile(path, flags, 0o600, diskio.WithScheduler(s), diskio.WithDirect(mode)); err != nil {
			return err
		}
		t = df
	}
	defer t.Close()

	var bufs []byte
	var err error
	if s != nil && j.Fixed {
		bufs, err = s.AllocBuffer(j.G * j.BS)
		defer s.FreeBuffer(bufs)
	} else {
		bufs, err = mem.Map(j.G * j.BS)
		defer mem.Unmap(bufs)
	}
	if err != nil {
		return err
	}
	if j.writes() {
		// Real data: a drive or filesystem that compresses or
		// deduplicates must not flatter the writes.
		rng := bench.NewRand(7)
		for i := 0; i+8 <= len(bufs); i += 8 {
			x := rng.Next()
			for k := range 8 {
				bufs[i+k] = byte(x >> (8 * k))
			}
		}
	}
	if j.RW == "write" && j.Fallocate {
		if err := t.Preallocate(0, span); err != nil {
			return err
		}
	}

	var stop atomic.Bool
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		stop.Store(true)
	}
	var commit *groupCommit
	if j.Fsync == "group" {
		commit = &groupCommit{sync: t.Datasync}
	}
	durable := func() error {
		switch j.Fsync {
		case "each":
			return t.Datasync()
		case "group":
			return commit.wait()
		}
		return nil
	}
	var ops, bytes atomic.Int64
	body := func(g int) {
		p := bufs[g*j.BS : (g+1)*j.BS]
		var n int64
		defer func() { ops.Add(n); bytes.Add(n * int64(j.BS)) }()
		switch j.RW {
		case "randread", "randwrite", "mixed":
			rng := bench.NewRand(uint64(g))
			// At least one operation each, however short the run (a
			// round of a slow durable write can be shorter than one).
			for first := true; first || !stop.Load(); first = false {
				off := rng.Offset(span, int64(j.BS))
				read := j.RW == "randread" || (j.RW == "mixed" && int(rng.Next()%100) < j.Mix)
				t0 := time.Now()
				var err error
				if read {
					err = full(t.ReadAt(p, off))
				} else if err = full(t.WriteAt(p, off)); err == nil {
					err = durable()
				}
				if err != nil {
					fail(err)
					return
				}
				h.Record(time.Since(t0))
				n++
			}
		case "read":
			start, end := int64(g)*per, int64(g+1)*per
			read := func(p []byte, off int64) error { return full(t.ReadAt(p, off)) }
			if j.Stream && df != nil {
				sr, err := df.NewStreamReader(start, diskio.StreamOptions{BufferSize: j.Buffer, ReadAhead: j.ReadAhead})
				if err != nil {
					fail(err)
					return
				}
				defer sr.Close()
				read = func(p []byte, _ int64) error { _, err := io.ReadFull(sr, p); return err }
			}
			for off := start; off < end && (off == start || !stop.Load()); off += int64(j.BS) {
				t0 := time.Now()
				if err := read(p, off); err != nil {
					fail(err)
					return
				}
				h.Record(time.Since(t0))
				n++
			}
		case "write":
			start, end := int64(g)*per, int64(g+1)*per
			write := func(p []byte, off int64) error {
				if err := full(t.WriteAt(p, off)); err != nil {
					return err
				}
				return durable()
			}
			var sw *diskio.StreamWriter
			if j.Stream && df != nil && (j.Fsync == "none" || j.Fsync == "end" || j.Fsync == "dsync") {
				var err error
				if sw, err = df.NewStreamWriter(start, diskio.StreamOptions{BufferSize: j.Buffer, ReadAhead: j.ReadAhead}); err != nil {
					fail(err)
					return
				}
				write = func(p []byte, _ int64) error { _, err := sw.Write(p); return err }
			}
			for off := start; off < end && (off == start || !stop.Load()); off += int64(j.BS) {
				t0 := time.Now()
				if err := write(p, off); err != nil {
					fail(err)
					return
				}
				h.Record(time.Since(t0))
				n++
			}
			if sw != nil {
				// The buffers written behind are part of the work.
				if err := sw.Close(); err != nil {
					fail(err)
				}
			}
		}
	}

	timer := time.AfterFunc(j.Duration, func() { stop.Store(true) })
	defer timer.Stop()
	unhook := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer unhook()
	done := e.prog.start(r.Group+": "+r.Label, j.Duration)
	reads0 := procReadCalls()
	var sc *syscallCount
	if j.CountSyscalls {
		if sc, err = startSyscallCount(); err != nil {
			r.Note = joinNote(r.Note, err.Error())
		} else {
			defer sc.close()
		}
	}
	calls0, _ := sc.total()
	var st sched.Stats // one snapshot's room, reused: it holds every histogram
	loopCounts := func() (enters, sleeps uint64) {
		if s == nil {
			return 0, 0
		}
		s.ReadStats(&st)
		return st.Enters, st.Sleeps
	}
	enters0, sleeps0 := loopCounts()
	m := bench.StartMeter()
	var wg sync.WaitGroup
	for g := range j.G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(g)
		}()
	}
	wg.Wait()
	if firstErr == nil && j.Fsync == "end" && j.writes() {
		if err := t.Sync(); err != nil {
			fail(err)
		}
	}
	u := m.Stop()
	calls1, _ := sc.total()
	enters1, sleeps1 := loopCounts()
	done()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if df != nil {
		r.Direct = df.Direct()
	}
	nops := ops.Load()
	if nops == 0 {
		return errors.New("no operation completed")
	}
	r.measured(nops, bytes.Load(), u, h)
	r.LoopEntersPerOp = float64(enters1-enters0) / float64(nops)
	r.LoopSleepsPerOp = float64(sleeps1-sleeps0) / float64(nops)
	switch {
	case j.CountSyscalls:
		r.SyscallsPerOp = float64(calls1-calls0) / float64(nops)
	case untraced:
		r.SyscallsPerOp = float64(procReadCalls()-reads0) / float64(nops)
	case osT != nil:
		r.SyscallsPerOp = float64(osT.calls.Load()) / float64(nops)
	default:
		r.SyscallsPerOp = float64(counter.calls.Load()) / float64(nops)
		r.SubmitUsPerOp = float64(counter.submitNs.Load()) / 1e3 / float64(nops)
		if st := s.Fixed(); j.Fixed && j.Backend == "uring" && (!st.Buffers || st.Unregistered > 0) {
			r.Note = joinNote(r.Note, st.String())
		}
	}
	return nil
}

// measured fills r with a run's figures: ops operations moving bytes,
// what the meter saw (u) and their latencies (h).
func (r *Result) measured(ops, bytes int64, u bench.Usage, h *bench.Histogram) {
	sec := u.Elapsed.Seconds()
	r.Ops, r.Bytes, r.Seconds = ops, bytes, sec
	r.IOPS, r.MBPerS = float64(ops)/sec, float64(bytes)/sec/1e6
	r.Lat = Latency{P50: us(h.Quantile(0.5)), P90: us(h.Quantile(0.9)), P99: us(h.Quantile(0.99)),
		P999: us(h.Quantile(0.999)), Max: us(h.Max()), Mean: us(h.Mean())}
	r.CPUUsPerOp = us(u.CPU) / float64(ops)
	r.ThreadsPeak, r.WorkersPeak = u.PeakThreads, u.PeakWorkers
	r.AllocsPerOp = float64(u.Allocs) / float64(ops)
}

// pow2 is the smallest power of two not below n.
func pow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}

// full turns a short transfer into an error: every operation of a run
// moves whole blocks inside the file.
func full(n int, err error) error {
	if err != nil {
		return err
	}
	if n == 0 {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// groupCommit lets concurrent writers share fdatasyncs: a writer whose
// data is written waits for a sync that started after its write; if none
// is running it runs one itself, for everyone who wrote before it started
// (the leader/follower scheme of database log writers).
type groupCommit struct {
	mu        sync.Mutex
	cond      *sync.Cond
	started   uint64 // syncs started
	completed uint64 // the newest sync finished
	running   bool
	err       error
	sync      func() error
}

func (c *groupCommit) wait() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cond == nil {
		c.cond = sync.NewCond(&c.mu)
	}
	need := c.started + 1 // a sync that starts from now on covers our write
	for c.completed < need {
		if c.running {
			c.cond.Wait()
			continue
		}
		c.running = true
		c.started++
		mine := c.started
		c.mu.Unlock()
		err := c.sync()
		c.mu.Lock()
		c.running = false
		c.completed, c.err = mine, err
		c.cond.Broadcast()
	}
	return c.err
}
