//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/sched"
)

func init() {
	presets["dropin"] = presetDropIn
	presetNames = append(presetNames, "dropin")
	customRuns["dropin"] = dropinCustom
}

// presetDropIn: what a program gets by changing one import. The
// workloads below run the way programs write them, through three sides:
// os (os.OpenFile), diskio (diskio.OpenFile with no options: the page
// cache) and direct (diskio.OpenFile with WithDirect(Direct)). Each
// workload is a set of the three rows, run in runAll's alternating rounds
// (3 by default, after one unmeasured round of every row), each run in a
// child process of its own so that its peak OS thread count (sampled
// every 5 ms, io_uring's workers included) is its own. The table gives
// each side's median, diskio's and direct's ratio to os (the median of
// the rounds' ratios, each round's rows run side by side) with the
// smallest and largest round's, and each side's peak threads; its last
// column checks diskio (the default) against the targets:
//
//   - at least 0.95x os (median) and 0.9x in every round;
//   - cold random reads at 16 goroutines and more: at least 1.2x;
//   - at most GOMAXPROCS + 4 + the io_uring worker cap OS threads, and
//     fewer than os wherever os needs more than 20.
//
// The random reads are timed (-duration, 1.5 s a row by default, split
// over the rounds); the others do a fixed amount of work, which -scale
// multiplies. The read workloads use the -size data file (1 GiB): cold
// ones start with it evicted from the page cache (fdatasync, then
// posix_fadvise DONTNEED). -workloads selects rows.
func presetDropIn(ctx context.Context, s *suite) error {
	c := s.c
	specs, err := dropinSelect(c.workloads)
	if err != nil {
		return err
	}
	if !c.roundsSet {
		c.rounds = 3
		s.rep.Rounds = 3
	}
	if c.warmup > 0 {
		s.warmRounds, s.warmed = 1, true
	}
	dir, err := os.MkdirTemp(s.e.dir, "testbench-dropin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var jobs []Job
	for _, sp := range specs {
		if sp.writesData && s.e.userFile {
			return fmt.Errorf("dropin: %s overwrites the data file, and -file is never written (drop -file, or leave %s out)", sp.key, sp.key)
		}
		for _, side := range dropinSides {
			j := Job{Group: sp.title(c.scale, s.e.size), Label: side.label, Backend: side.backend, RW: sp.name, BS: sp.bs, G: sp.g,
				Direct: side.backend == "direct", Fsync: "none", Base: side.backend == "os.File", Custom: "dropin", Variant: sp.key, Dir: dir,
				Region: sp.region, Limit: sp.limit(c.scale), Duration: sp.duration * time.Duration(c.rounds)}
			jobs = append(jobs, j)
		}
	}
	first := len(s.rep.Results)
	if err := s.runAll(ctx, jobs); err != nil {
		return err
	}
	s.rep.DropIn = dropinSummarize(specs, s.rep.Results[first:])
	s.rep.DropIn.Isolated = c.isolate && c.trace == ""
	s.print = printDropIn
	return nil
}

// dropinSides are the three ways a program opens its files.
var dropinSides = []struct{ backend, label string }{
	{"os.File", "os"},
	{"diskio", "diskio"},
	{"direct", "direct"},
}

// dropinFile is what the workloads use of a file; *os.File and
// *diskio.File both are one. io.Copy sees the dynamic type, so it finds
// their WriteTo and ReadFrom as a program's call would.
type dropinFile interface {
	io.Reader
	io.Writer
	io.ReaderAt
	io.WriterAt
	io.Seeker
	io.Closer
	Sync() error
}

type opener func(name string, flag int, perm fs.FileMode) (dropinFile, error)

func dropinOpener(backend string) (opener, error) {
	switch backend {
	case "os.File":
		return func(name string, flag int, perm fs.FileMode) (dropinFile, error) {
			f, err := os.OpenFile(name, flag, perm)
			if err != nil {
				return nil, err
			}
			return f, nil
		}, nil
	case "diskio", "direct":
		var opts []diskio.Option
		if backend == "direct" {
			opts = append(opts, diskio.WithDirect(diskio.Direct))
		}
		return func(name string, flag int, perm fs.FileMode) (dropinFile, error) {
			f, err := diskio.OpenFile(name, flag, perm, opts...)
			if err != nil {
				return nil, err
			}
			return f, nil
		}, nil
	}
	return nil, fmt.Errorf("dropin: unknown side %q", backend)
}

// dropinSpec is one row of the table: a workload at one parameter.
type dropinSpec struct {
	key  string // -workloads name of the row, e.g. cold-read-16
	name string // the workload's, e.g. cold-read
	unit string // "ops/s" or "MB/s"
	g    int    // goroutines
	bs   int    // bytes per operation (a record, a buffer)
	// count is the work of an untimed row at -scale 1 (operations,
	// files, or bytes with unitBytes); a row with a duration is timed
	// (that much a round).
	count     int64
	unitBytes bool
	duration  time.Duration
	region    int64 // random reads: offsets in [0, region) (0: the file)
	// writesData: the row overwrites the data file.
	writesData bool
	head       func(n int64, size int64) string // the row's title, n its scaled count
	run        func(ctx context.Context, w *dropinWork) error
	prepare    func(e *env, j Job) error
}

func (sp dropinSpec) limit(scale float64) int64 {
	if sp.count == 0 {
		return 0
	}
	n := int64(math.Round(float64(sp.count) * scale))
	if sp.unitBytes {
		n = max(n, int64(sp.bs)) &^ 4095 // whole pages
		return max(n, 4096)
	}
	return max(n, int64(sp.g)) // one operation per goroutine at least
}

func (sp dropinSpec) title(scale float64, size int64) string {
	return sp.head(sp.limit(scale), size)
}

const dropinHot = 256 << 20 // the hot reads' working set

// dropinSpecs is the list, in the table's order.
var dropinSpecs = func() []dropinSpec {
	var specs []dropinSpec
	const perRound = 500 * time.Millisecond
	for _, g := range []int{1, 16} {
		specs = append(specs, dropinSpec{key: "hot-read-" + strconv.Itoa(g), name: "hot-read", unit: "ops/s", g: g, bs: 4096, duration: perRound, region: dropinHot,
			head: func(_, size int64) string {
				return fmt.Sprintf("hot 4 KiB random reads (%s in the page cache), %s", sizeName(min(dropinHot, size)), goroutines(g))
			},
			run: dropinRandomReads, prepare: dropinPrepareHot})
	}
	for _, g := range []int{1, 16, 256} {
		specs = append(specs, dropinSpec{key: "cold-read-" + strconv.Itoa(g), name: "cold-read", unit: "ops/s", g: g, bs: 4096, duration: perRound,
			head: func(_, size int64) string {
				return fmt.Sprintf("cold 4 KiB random reads (%s file), %s", sizeName(size), goroutines(g))
			},
			run: dropinRandomReads, prepare: dropinPrepareCold})
	}
	specs = append(specs,
		dropinSpec{key: "seq-read", name: "seq-read", unit: "MB/s", g: 1, bs: 32 << 10,
			head: func(_, size int64) string {
				return fmt.Sprintf("sequential Read, 32 KiB buffer, cold (%s)", sizeName(size))
			},
			run: dropinSeqRead, prepare: dropinPrepareCold},
		dropinSpec{key: "copy-discard", name: "copy-discard", unit: "MB/s", g: 1, bs: 32 << 10,
			head: func(_, size int64) string { return fmt.Sprintf("io.Copy(io.Discard, f), cold (%s)", sizeName(size)) },
			run:  dropinCopyDiscard, prepare: dropinPrepareCold},
		dropinSpec{key: "bufio-write", name: "bufio-write", unit: "MB/s", g: 1, bs: 100, count: 256 << 20, unitBytes: true,
			head: func(n, _ int64) string {
				return fmt.Sprintf("bufio.Writer (4 KiB) of 100 B records, a new %s file, no Sync", sizeName(n))
			},
			run: dropinBufioWrite},
	)
	for _, bs := range []int{100, 1000} {
		specs = append(specs, dropinSpec{key: "write-" + strconv.Itoa(bs), name: "write", unit: "ops/s", g: 1, bs: bs, count: 200_000,
			head: func(n, _ int64) string {
				return fmt.Sprintf("%s Writes of %d B to a new file, no Sync", commas(float64(n)), bs)
			},
			run: dropinWrites})
	}
	specs = append(specs,
		dropinSpec{key: "append-sync", name: "append-sync", unit: "ops/s", g: 1, bs: 100, count: 2_000,
			head: func(n, _ int64) string {
				return fmt.Sprintf("%s appends of 100 B (O_APPEND), Sync each", commas(float64(n)))
			},
			run: dropinAppends},
		dropinSpec{key: "group-commit", name: "group-commit", unit: "ops/s", g: 64, bs: 4096, count: 64 * 64,
			head: func(n, _ int64) string {
				return fmt.Sprintf("64 goroutines, 4 KiB WriteAt + Sync each (group commit), %s writes", commas(float64(n)))
			},
			run: dropinGroupCommit},
	)
	for _, g := range []int{64, 256, 1024} {
		specs = append(specs, dropinSpec{key: "many-files-" + strconv.Itoa(g), name: "many-files", unit: "ops/s", g: g, bs: 4096, count: 16_384,
			head: func(n, _ int64) string {
				return fmt.Sprintf("%d goroutines, each 4 KiB appends (O_APPEND) + Sync to its own new file, %s commits", g, commas(float64(n)))
			},
			run: dropinManyFiles})
	}
	for _, g := range []int{1, 16} {
		specs = append(specs, dropinSpec{key: "overwrite-" + strconv.Itoa(g), name: "overwrite", unit: "ops/s", g: g, bs: 4096, count: 50_000, writesData: true,
			head: func(n, size int64) string {
				return fmt.Sprintf("%s random 4 KiB overwrites of an uncached %s file, no Sync, %s", commas(float64(n)), sizeName(size), goroutines(g))
			},
			run: dropinOverwrites, prepare: dropinPrepareCold})
	}
	specs = append(specs,
		dropinSpec{key: "small-create", name: "small-create", unit: "ops/s", g: 1, bs: 10 << 10, count: 2_000,
			head: func(n, _ int64) string {
				return fmt.Sprintf("%s small files: create, write 10 KiB, close", commas(float64(n)))
			},
			run: dropinSmallCreate},
		dropinSpec{key: "small-read", name: "small-read", unit: "ops/s", g: 1, bs: 10 << 10, count: 2_000, duration: perRound,
			head: func(n, _ int64) string {
				return fmt.Sprintf("the %s files (in the page cache): open, io.ReadAll, close (passes over them for the row's time)", commas(float64(n)))
			},
			run: dropinSmallRead, prepare: dropinPrepareSmall},
		dropinSpec{key: "copy-file", name: "copy-file", unit: "MB/s", g: 1, bs: 1 << 20, count: 512 << 20, unitBytes: true,
			head: func(n, _ int64) string {
				return fmt.Sprintf("io.Copy file to a new file, %s, cold source, no Sync", sizeName(n))
			},
			run: dropinCopyFile, prepare: dropinPrepareCopy},
	)
	return specs
}()

func goroutines(g int) string {
	if g == 1 {
		return "1 goroutine"
	}
	return strconv.Itoa(g) + " goroutines"
}

// dropinSelect is the rows -workloads names (all without it): a
// workload's name selects its rows, a row's key the row.
func dropinSelect(names []string) ([]dropinSpec, error) {
	if len(names) == 0 {
		return dropinSpecs, nil
	}
	var out []dropinSpec
	for _, n := range names {
		found := false
		for _, sp := range dropinSpecs {
			if sp.key == n || sp.name == n {
				found = true
				if !slices.ContainsFunc(out, func(o dropinSpec) bool { return o.key == sp.key }) {
					out = append(out, sp)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("-workloads: unknown %q (want %s)", n, strings.Join(dropinNames(), ", "))
		}
	}
	// The table's order, whatever the command line's.
	slices.SortStableFunc(out, func(a, b dropinSpec) int { return dropinIndex(a.key) - dropinIndex(b.key) })
	return out, nil
}

func dropinIndex(key string) int {
	return slices.IndexFunc(dropinSpecs, func(sp dropinSpec) bool { return sp.key == key })
}

// dropinNames lists the workloads and their rows: "cold-read (cold-read-1,
// cold-read-16, cold-read-256)".
func dropinNames() []string {
	var out []string
	for i := 0; i < len(dropinSpecs); {
		name := dropinSpecs[i].name
		var keys []string
		for ; i < len(dropinSpecs) && dropinSpecs[i].name == name; i++ {
			keys = append(keys, dropinSpecs[i].key)
		}
		if len(keys) == 1 && keys[0] == name {
			out = append(out, name)
		} else {
			out = append(out, name+" ("+strings.Join(keys, ", ")+")")
		}
	}
	return out
}

// dropinFlags handles what -preset dropin's flags ask before anything is
// written: -workloads list prints the rows (done), unknown names fail.
func dropinFlags(c *config, w io.Writer) (done bool, err error) {
	if slices.Equal(c.workloads, []string{"list"}) {
		for _, n := range dropinNames() {
			fmt.Fprintln(w, n)
		}
		return true, nil
	}
	_, err = dropinSelect(c.workloads)
	return false, err
}

func dropinSpecOf(key string) (dropinSpec, error) {
	if i := dropinIndex(key); i >= 0 {
		return dropinSpecs[i], nil
	}
	return dropinSpec{}, fmt.Errorf("dropin: unknown workload %q", key)
}

// dropinCustom is the preset's measurement (custom.go): Variant is the
// row's key, Backend the side.
var dropinCustom = &customRun{
	prepare: func(e *env, j Job) error {
		sp, err := dropinSpecOf(j.Variant)
		if err != nil || sp.prepare == nil {
			return err
		}
		return sp.prepare(e, j)
	},
	run: dropinRun,
}

// The page cache before a run, set by the parent process.

func dropinPrepareCold(e *env, _ Job) error { return dropCache(e.path) }

func dropinPrepareHot(e *env, j Job) error {
	if err := dropCache(e.path); err != nil {
		return err
	}
	return warm(e.path, min(j.Region, e.size))
}

func dropinSmallDir(j Job) string { return filepath.Join(j.Dir, fmt.Sprintf("small-%d", j.Limit)) }

// dropinPrepareSmall writes the small files once (with os.File); they
// stay in the page cache, as files a program has just written.
func dropinPrepareSmall(_ *env, j Job) error {
	dir := dropinSmallDir(j)
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data := dropinData(j.BS)
	for i := range j.Limit {
		if err := os.WriteFile(dropinSmallName(dir, i), data, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
}

func dropinSmallName(dir string, i int64) string { return filepath.Join(dir, fmt.Sprintf("f%05d", i)) }

func dropinCopySource(j Job) string {
	return filepath.Join(j.Dir, fmt.Sprintf("copy-src-%d.dat", j.Limit))
}

// dropinPrepareCopy writes the copy's source once, then evicts it.
func dropinPrepareCopy(_ *env, j Job) error {
	path := dropinCopySource(j)
	if st, err := os.Stat(path); err != nil || st.Size() != j.Limit {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		err = bench.Fill(f, j.Limit, nil)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return dropCache(path)
}

// dropinData is n bytes of random data (a filesystem that compresses
// must not flatter the writes).
func dropinData(n int) []byte {
	b := make([]byte, n)
	rng := bench.NewRand(uint64(n))
	for i := range b {
		b[i] = byte(rng.Next())
	}
	return b
}

// dropinWork is one run of a row: the side's opener, the data file, and
// the measurement the workload starts and stops around what it times.
type dropinWork struct {
	j      Job
	e      *env
	open   opener
	direct bool // a file the run opened was O_DIRECT (File.Direct)

	m       *bench.Meter
	u       bench.Usage
	rw0, rw int64 // read and write system calls (/proc/self/io syscr + syscw)
	stop    atomic.Bool
	hist    *bench.Histogram
	ops     int64
	bytes   int64
}

// begin starts the measurement: what the workload does from here to end
// is timed, its threads sampled.
func (w *dropinWork) begin() {
	w.rw0 = procIO("syscr") + procIO("syscw")
	w.m = bench.StartMeter()
}

func (w *dropinWork) end() {
	w.u = w.m.Stop()
	w.rw = procIO("syscr") + procIO("syscw") - w.rw0
}

// opened notes whether f is O_DIRECT.
func (w *dropinWork) opened(f dropinFile) {
	if d, ok := f.(*diskio.File); ok && d.Direct() {
		w.direct = true
	}
}

// temp is a new file's name in the preset's directory, this run's own.
func (w *dropinWork) temp(what string) string {
	return filepath.Join(w.j.Dir, fmt.Sprintf("%s-%s-%d", what, strings.ReplaceAll(w.j.Backend, ".", ""), os.Getpid()))
}

func dropinRun(ctx context.Context, e *env, j Job, r *Result, h *bench.Histogram) error {
	sp, err := dropinSpecOf(j.Variant)
	if err != nil {
		return err
	}
	open, err := dropinOpener(j.Backend)
	if err != nil {
		return err
	}
	// The side's first open starts diskio's default scheduler, as a
	// program's first open would, before anything is measured.
	f, err := open(e.path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	f.Close()
	if j.Backend != "os.File" {
		// Where the kernel or a seccomp filter (-seccomp) refused
		// io_uring, the row says what the scheduler runs on.
		if s, err := sched.Default(); err == nil && s.FallbackReason() != "" {
			r.Note = joinNote(r.Note, fmt.Sprintf("scheduler on %s (%s)", s.Backend(), s.FallbackReason()))
		}
	}
	w := &dropinWork{j: j, e: e, open: open, hist: h}
	unhook := context.AfterFunc(ctx, func() { w.stop.Store(true) })
	defer unhook()
	if err := sp.run(ctx, w); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.ops == 0 {
		return errors.New("no operation completed")
	}
	r.measured(w.ops, w.bytes, w.u, h)
	r.SyscallsPerOp = float64(w.rw) / float64(w.ops)
	r.Direct = w.direct
	return nil
}

// parallel runs body on j.G goroutines, each with a histogram of its own
// (merged into the run's after), and returns the first error.
func (w *dropinWork) parallel(body func(g int, h *bench.Histogram) error) error {
	var wg sync.WaitGroup
	errs := make([]error, w.j.G)
	hs := make([]bench.Histogram, w.j.G)
	for g := range w.j.G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[g] = body(g, &hs[g]); errs[g] != nil {
				w.stop.Store(true)
			}
		}()
	}
	wg.Wait()
	for g := range hs {
		w.hist.Merge(&hs[g])
	}
	return errors.Join(errs...)
}

// share is goroutine g's part of n operations.
func share(n int64, g, of int) int64 {
	return n/int64(of) + min(1, max(0, n%int64(of)-int64(g)))
}

// dropinRandomReads: ReadAt of j.BS bytes at random aligned offsets of the
// data file (of [0, Region) if set) from j.G goroutines, for the row's
// time.
func dropinRandomReads(_ context.Context, w *dropinWork) error {
	j := w.j
	f, err := w.open(w.e.path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	w.opened(f)
	span := w.e.size
	if j.Region > 0 {
		span = min(span, j.Region)
	}
	var ops atomic.Int64
	bufs := make([][]byte, j.G)
	for g := range bufs {
		bufs[g] = make([]byte, j.BS)
	}
	w.begin()
	timer := time.AfterFunc(j.Duration, func() { w.stop.Store(true) })
	err = w.parallel(func(g int, h *bench.Histogram) error {
		rng := bench.NewRand(uint64(g) + 1)
		var n int64
		defer func() { ops.Add(n) }()
		for first := true; first || !w.stop.Load(); first = false {
			off := rng.Offset(span, int64(j.BS))
			t0 := time.Now()
			if _, err := f.ReadAt(bufs[g], off); err != nil {
				return err
			}
			h.Record(time.Since(t0))
			n++
		}
		return nil
	})
	timer.Stop()
	w.end()
	w.ops = ops.Load()
	w.bytes = w.ops * int64(j.BS)
	return err
}

// dropinSeqRead: Read with a 32 KiB buffer from the start to io.EOF.
func dropinSeqRead(_ context.Context, w *dropinWork) error {
	f, err := w.open(w.e.path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	w.opened(f)
	buf := make([]byte, w.j.BS)
	w.begin()
	for !w.stop.Load() {
		t0 := time.Now()
		n, err := f.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			w.end()
			return err
		}
		w.hist.Record(time.Since(t0))
		w.ops++
		w.bytes += int64(n)
	}
	w.end()
	if w.bytes != w.e.size && !w.stop.Load() {
		return fmt.Errorf("read %d bytes of %d", w.bytes, w.e.size)
	}
	return nil
}

// dropinCopyDiscard: io.Copy(io.Discard, f) of the whole file, one
// operation.
func dropinCopyDiscard(_ context.Context, w *dropinWork) error {
	f, err := w.open(w.e.path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	w.opened(f)
	w.begin()
	t0 := time.Now()
	n, err := io.Copy(io.Discard, f)
	w.hist.Record(time.Since(t0))
	w.end()
	if err == nil && n != w.e.size {
		err = fmt.Errorf("io.Copy copied %d bytes of %d", n, w.e.size)
	}
	w.ops, w.bytes = 1, n
	return err
}

// timedWriter times each Write into h: bufio.Writer's flushes.
type timedWriter struct {
	w dropinFile
	h *bench.Histogram
	n int64
}

func (t *timedWriter) Write(p []byte) (int, error) {
	t0 := time.Now()
	n, err := t.w.Write(p)
	t.h.Record(time.Since(t0))
	t.n++
	return n, err
}

// dropinBufioWrite: create a file, write Limit bytes of j.BS-byte records
// through a bufio.Writer of the default size, Flush, Close. One operation
// is one write of the bufio.Writer's buffer.
func dropinBufioWrite(_ context.Context, w *dropinWork) error {
	name := w.temp("bufio")
	defer os.Remove(name)
	rec := dropinData(w.j.BS)
	w.begin()
	f, err := w.open(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		w.end()
		return err
	}
	w.opened(f)
	tw := &timedWriter{w: f, h: w.hist}
	bw := bufio.NewWriter(tw)
	var n int64
	for n < w.j.Limit && err == nil {
		var k int
		k, err = bw.Write(rec[:min(int64(len(rec)), w.j.Limit-n)])
		n += int64(k)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	w.end()
	w.ops, w.bytes = tw.n, n
	return err
}

// dropinWrites: create a file, Write j.BS bytes Limit times, Close.
func dropinWrites(_ context.Context, w *dropinWork) error {
	name := w.temp("writes")
	defer os.Remove(name)
	rec := dropinData(w.j.BS)
	w.begin()
	f, err := w.open(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		w.end()
		return err
	}
	w.opened(f)
	for w.ops < w.j.Limit {
		t0 := time.Now()
		if _, err = f.Write(rec); err != nil {
			break
		}
		w.hist.Record(time.Since(t0))
		w.ops++
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	w.end()
	w.bytes = w.ops * int64(w.j.BS)
	return err
}

// dropinAppends: create an O_APPEND file; Limit times, Write j.BS bytes
// and Sync.
func dropinAppends(_ context.Context, w *dropinWork) error {
	name := w.temp("appends")
	defer os.Remove(name)
	rec := dropinData(w.j.BS)
	w.begin()
	f, err := w.open(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		w.end()
		return err
	}
	w.opened(f)
	for w.ops < w.j.Limit {
		t0 := time.Now()
		if _, err = f.Write(rec); err != nil {
			break
		}
		if err = f.Sync(); err != nil {
			break
		}
		w.hist.Record(time.Since(t0))
		w.ops++
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	w.end()
	w.bytes = w.ops * int64(w.j.BS)
	return err
}

// dropinGroupCommit: j.G goroutines share a new file; each writes j.BS
// bytes at offsets of its own (interleaved, so the file grows from the
// start) and Syncs after each, Limit writes in all.
func dropinGroupCommit(_ context.Context, w *dropinWork) error {
	j := w.j
	name := w.temp("group")
	defer os.Remove(name)
	rec := dropinData(j.BS)
	f, err := w.open(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	w.opened(f)
	return w.commits(func(g int, k int64) error {
		_, err := f.WriteAt(rec, (k*int64(j.G)+int64(g))*int64(j.BS))
		if err == nil {
			err = f.Sync()
		}
		return err
	})
}

// commits runs j.G goroutines, goroutine g making its share of Limit
// commits (commit(g, k) for its k-th), each timed; one operation is one
// commit of j.BS bytes.
func (w *dropinWork) commits(commit func(g int, k int64) error) error {
	j := w.j
	var ops atomic.Int64
	w.begin()
	err := w.parallel(func(g int, h *bench.Histogram) error {
		for k := range share(j.Limit, g, j.G) {
			t0 := time.Now()
			if err := commit(g, k); err != nil {
				return err
			}
			h.Record(time.Since(t0))
			ops.Add(1)
		}
		return nil
	})
	w.end()
	w.ops = ops.Load()
	w.bytes = w.ops * int64(j.BS)
	return err
}

// dropinManyFiles: j.G goroutines, each with a new O_APPEND file of its
// own (one log per tenant), append j.BS bytes and Sync, Limit commits in
// all. The files are created before the measurement.
func dropinManyFiles(_ context.Context, w *dropinWork) error {
	j := w.j
	dir := w.temp("many")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rec := dropinData(j.BS)
	files := make([]dropinFile, j.G)
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	for g := range files {
		f, err := w.open(dropinSmallName(dir, int64(g)), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		files[g] = f
	}
	w.opened(files[0])
	return w.commits(func(g int, _ int64) error {
		_, err := files[g].Write(rec)
		if err == nil {
			err = files[g].Sync()
		}
		return err
	})
}

// dropinOverwrites: Limit random j.BS-byte writes at aligned offsets of
// the data file, evicted before the run, from j.G goroutines.
func dropinOverwrites(_ context.Context, w *dropinWork) error {
	j := w.j
	f, err := w.open(w.e.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	w.opened(f)
	rec := dropinData(j.BS)
	var ops atomic.Int64
	w.begin()
	err = w.parallel(func(g int, h *bench.Histogram) error {
		rng := bench.NewRand(uint64(g) + 101)
		for range share(j.Limit, g, j.G) {
			off := rng.Offset(w.e.size, int64(j.BS))
			t0 := time.Now()
			if _, err := f.WriteAt(rec, off); err != nil {
				return err
			}
			h.Record(time.Since(t0))
			ops.Add(1)
		}
		return nil
	})
	w.end()
	w.ops = ops.Load()
	w.bytes = w.ops * int64(j.BS)
	return err
}

// dropinSmallCreate: Limit times, create a file, Write j.BS bytes, Close.
// One operation is one file.
func dropinSmallCreate(_ context.Context, w *dropinWork) error {
	dir := w.temp("create")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := dropinData(w.j.BS)
	var err error
	w.begin()
	for i := range w.j.Limit {
		t0 := time.Now()
		var f dropinFile
		if f, err = w.open(dropinSmallName(dir, i), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			break
		}
		if i == 0 {
			w.opened(f)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			break
		}
		w.hist.Record(time.Since(t0))
		w.ops++
	}
	w.end()
	w.bytes = w.ops * int64(w.j.BS)
	return err
}

// dropinSmallRead: for each of the small files, open it, io.ReadAll,
// Close; passes over them until the row's time is up (one at least).
func dropinSmallRead(_ context.Context, w *dropinWork) error {
	dir := dropinSmallDir(w.j)
	var err error
	w.begin()
	deadline := time.Now().Add(w.j.Duration)
	for n := int64(0); n < w.j.Limit || time.Now().Before(deadline) && !w.stop.Load(); n++ {
		i := n % w.j.Limit
		t0 := time.Now()
		var f dropinFile
		if f, err = w.open(dropinSmallName(dir, i), os.O_RDONLY, 0); err != nil {
			break
		}
		if n == 0 {
			w.opened(f)
		}
		var b []byte
		b, err = io.ReadAll(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil && len(b) != w.j.BS {
			err = fmt.Errorf("read %d bytes of %d", len(b), w.j.BS)
		}
		if err != nil {
			break
		}
		w.hist.Record(time.Since(t0))
		w.ops++
		w.bytes += int64(len(b))
	}
	w.end()
	return err
}

// dropinCopyFile: io.Copy from the (cold) source into a new file, Close.
// One operation.
func dropinCopyFile(_ context.Context, w *dropinWork) error {
	src, err := w.open(dropinCopySource(w.j), os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	name := w.temp("copy")
	defer os.Remove(name)
	w.begin()
	t0 := time.Now()
	dst, err := w.open(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		w.end()
		return err
	}
	w.opened(dst)
	n, err := io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	w.hist.Record(time.Since(t0))
	w.end()
	if err == nil && n != w.j.Limit {
		err = fmt.Errorf("io.Copy copied %d bytes of %d", n, w.j.Limit)
	}
	w.ops, w.bytes = 1, n
	return err
}

// The summary: one row per workload, the three sides' cells.

// dropinWorkerCap is the io_uring worker cap of a scheduler with the
// default options, as the kernel accepted it (0: none).
func dropinWorkerCap() int {
	s, err := sched.New(sched.Options{Backend: sched.URing, FixedBuffers: -1, FixedFiles: -1})
	if err != nil {
		return 0
	}
	defer s.Close()
	w := s.Fixed().Workers
	if !w.Capped {
		return 0
	}
	return int(w.Max.Bounded)
}

// dropinSummarize makes the table of the rows' results (three per spec,
// in order).
func dropinSummarize(specs []dropinSpec, rs []Result) *DropInSummary {
	sum := &DropInSummary{GOMAXPROCS: runtime.GOMAXPROCS(0), WorkerCap: dropinWorkerCap()}
	sum.ThreadBound = sum.GOMAXPROCS + 4 + sum.WorkerCap
	for i, sp := range specs {
		if 3*i+2 >= len(rs) {
			break
		}
		base, dio, direct := rs[3*i], rs[3*i+1], rs[3*i+2]
		sum.Rounds = max(sum.Rounds, len(base.Rounds))
		row := DropInRow{Key: sp.key, Title: base.Group, Unit: sp.unit,
			OS: dropinCell(sp, base, base), DiskIO: dropinCell(sp, dio, base), Direct: dropinCell(sp, direct, base)}
		row.OK = dropinCheck(sp, row, sum.ThreadBound)
		sum.Rows = append(sum.Rows, row)
	}
	return sum
}

func dropinValue(sp dropinSpec, iops, mbps float64) float64 {
	if sp.unit == "MB/s" {
		return mbps
	}
	return iops
}

func dropinCell(sp dropinSpec, r, base Result) DropInCell {
	c := DropInCell{Error: r.Error, Direct: r.Direct}
	if r.Error != "" || len(r.Rounds) == 0 {
		if c.Error == "" {
			c.Error = "no rounds"
		}
		return c
	}
	c.Value = dropinValue(sp, r.IOPS, r.MBPerS)
	c.CPUUsOp, c.RWCallsOp, c.P50Us, c.P99Us, c.BusyPerS = r.CPUUsPerOp, r.SyscallsPerOp, r.Lat.P50, r.Lat.P99, r.BusyPerS
	for _, rd := range r.Rounds {
		c.Threads = max(c.Threads, rd.ThreadsPeak)
		c.Workers = max(c.Workers, rd.WorkersPeak)
	}
	if base.Error != "" || len(base.Rounds) != len(r.Rounds) {
		return c
	}
	ratios := make([]float64, len(r.Rounds))
	for k, rd := range r.Rounds {
		b := dropinValue(sp, base.Rounds[k].IOPS, base.Rounds[k].MBPerS)
		if b <= 0 {
			return c
		}
		ratios[k] = dropinValue(sp, rd.IOPS, rd.MBPerS) / b
	}
	c.Ratio, c.RatioMin, c.RatioMax = median(ratios), slices.Min(ratios), slices.Max(ratios)
	return c
}

// dropinCheck says what of the targets diskio's cell misses.
func dropinCheck(sp dropinSpec, row DropInRow, bound int) string {
	d := row.DiskIO
	if d.Error != "" || row.OS.Error != "" {
		return "ERROR"
	}
	var miss []string
	want := 0.95
	if sp.name == "cold-read" && sp.g >= 16 {
		want = 1.2
	}
	if d.Ratio < want {
		miss = append(miss, fmt.Sprintf("LOW %.3fx<%.2f", d.Ratio, want))
	}
	if d.RatioMin < 0.9 {
		miss = append(miss, fmt.Sprintf("ROUND %.3fx<0.9", d.RatioMin))
	}
	if d.Threads > bound {
		miss = append(miss, fmt.Sprintf("THREADS %d>%d", d.Threads, bound))
	}
	if row.OS.Threads > 20 && d.Threads >= row.OS.Threads {
		miss = append(miss, fmt.Sprintf("THREADS %d>=os %d", d.Threads, row.OS.Threads))
	}
	if len(miss) == 0 {
		return "ok"
	}
	return strings.Join(miss, ", ")
}

func dropinNum(v float64) string {
	if v >= 1000 {
		return commas(v)
	}
	return num(v)
}

func dropinRatio(c DropInCell) (ratio, spread string) {
	if c.Error != "" {
		return "error", ""
	}
	if c.Ratio == 0 {
		return "-", ""
	}
	return fmt.Sprintf("%.2fx", c.Ratio), fmt.Sprintf("%.2f-%.2f", c.RatioMin, c.RatioMax)
}

func dropinThreads(c DropInCell) string {
	if c.Error != "" {
		return "-"
	}
	if c.Workers > 0 {
		return fmt.Sprintf("%d (%d iou)", c.Threads, c.Workers)
	}
	return strconv.Itoa(c.Threads)
}

func dropinValueCell(c DropInCell) string {
	if c.Error != "" {
		return "error"
	}
	return dropinNum(c.Value)
}

// printDropIn writes the notes, the table aligned, the diagnostics (CPU,
// system calls, latency), any errors, and the table again as markdown.
func printDropIn(w io.Writer, rep *Report) {
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	var notes []string
	sides := map[string][]string{}
	for _, r := range rep.Results {
		if r.Note != "" && !slices.Contains(sides[r.Note], r.Label) {
			if sides[r.Note] == nil {
				notes = append(notes, r.Note)
			}
			sides[r.Note] = append(sides[r.Note], r.Label)
		}
	}
	for _, n := range notes {
		fmt.Fprintf(w, "note (%s): %s\n", strings.Join(sides[n], ", "), n)
	}
	sum := rep.DropIn
	if sum == nil {
		return
	}
	fmt.Fprintf(w, "\nGOMAXPROCS %d, io_uring worker cap %d (sched.Options.IOWQMaxWorkers default): diskio's thread bound GOMAXPROCS+4+%d = %d\n",
		sum.GOMAXPROCS, sum.WorkerCap, sum.WorkerCap, sum.ThreadBound)
	fmt.Fprintf(w, "os: os.OpenFile; diskio: diskio.OpenFile, no options (the page cache); direct: diskio.OpenFile with WithDirect(Direct)\n")
	fmt.Fprintf(w, "each cell: the median of %d alternating rounds; ratio: the median of the rounds' ratios to os, rounds: the smallest and largest; threads: peak OS threads of the process (io_uring workers included), the most of any round\n", sum.Rounds)
	if !sum.Isolated {
		fmt.Fprintf(w, "the runs shared one process (-isolate=false): a row's threads include every earlier run's\n")
	}
	fmt.Fprintf(w, "ok: diskio >= 0.95x os (cold random reads at 16+ goroutines: >= 1.2x), every round >= 0.9x, threads <= %d and below os's where os's exceed 20\n\n", sum.ThreadBound)

	head := []string{"workload", "unit", "os", "diskio", "ratio", "rounds", "direct", "ratio", "rounds", "threads os", "diskio", "direct", "ok"}
	lines := []tableLine{{cells: head}}
	var md [][]string
	for _, r := range sum.Rows {
		dr, ds := dropinRatio(r.DiskIO)
		xr, xs := dropinRatio(r.Direct)
		lines = append(lines, tableLine{cells: []string{r.Title, r.Unit, dropinValueCell(r.OS), dropinValueCell(r.DiskIO), dr, ds,
			dropinValueCell(r.Direct), xr, xs, dropinThreads(r.OS), dropinThreads(r.DiskIO), dropinThreads(r.Direct), r.OK}})
		md = append(md, []string{r.Title, r.Unit, dropinValueCell(r.OS), dropinValueCell(r.DiskIO), dr + " (" + ds + ")",
			dropinValueCell(r.Direct), xr + " (" + xs + ")", dropinThreads(r.OS) + " / " + dropinThreads(r.DiskIO) + " / " + dropinThreads(r.Direct), r.OK})
	}
	writeAligned(w, len(head), lines)

	fmt.Fprintf(w, "\ndiagnostics (medians): CPU µs/op, read+write system calls/op (/proc/self/io; io_uring's requests not counted), p50 and p99 µs, os / diskio / direct\n")
	dhead := []string{"workload", "CPU µs/op", "rw calls/op", "p50 µs", "p99 µs", "busy hashes/s", "O_DIRECT"}
	dlines := []tableLine{{cells: dhead}}
	three := func(f func(DropInCell) string, r DropInRow) string {
		return f(r.OS) + " / " + f(r.DiskIO) + " / " + f(r.Direct)
	}
	for _, r := range sum.Rows {
		dlines = append(dlines, tableLine{cells: []string{r.Key,
			three(func(c DropInCell) string { return num(c.CPUUsOp) }, r),
			three(func(c DropInCell) string { return fmt.Sprintf("%.2f", c.RWCallsOp) }, r),
			three(func(c DropInCell) string { return num(c.P50Us) }, r),
			three(func(c DropInCell) string { return num(c.P99Us) }, r),
			three(func(c DropInCell) string { return dropinNum(c.BusyPerS) }, r),
			strconv.FormatBool(r.Direct.Direct)}})
	}
	writeAligned(w, len(dhead), dlines)
	for _, r := range sum.Rows {
		for _, c := range []struct {
			side string
			cell DropInCell
		}{{"os", r.OS}, {"diskio", r.DiskIO}, {"direct", r.Direct}} {
			if c.cell.Error != "" {
				fmt.Fprintf(w, "error: %s, %s: %s\n", r.Key, c.side, c.cell.Error)
			}
		}
	}

	fmt.Fprintf(w, "\nmarkdown:\n\n")
	writeMarkdown(w, []string{"workload", "unit", "os.File", "diskio", "ratio (rounds)", "direct", "ratio (rounds)", "threads os / diskio / direct", "ok"}, md)
}
