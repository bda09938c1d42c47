//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/sched"
)

func init() {
	presets["cache"] = presetCache
	presetNames = append(presetNames, "cache")
}

// presetCache: buffered files (diskio.PageCache) against os.File's
// buffered reads, on a hot file (in the page cache) and a cold one
// (evicted before each run): 4 KiB random reads at 1, 8 and 128
// goroutines, a cold 128 KiB scan, and io.Copy of a hot 4 MiB file. The
// cold rows read a file much larger than what a run can bring into the
// cache only if -size is (4G or more at ~100k reads/s).
func presetCache(ctx context.Context, s *suite) error {
	c := s.c
	var jobs []Job
	const hot = 256 << 20 // warmed before each run, read at random
	for _, g := range []int{1, 8, 128} {
		for _, be := range []string{"uring", "os.File"} {
			j := c.job(fmt.Sprintf("hot file (page cache), buffered, 4 KiB random read, %d goroutines", g), be, "randread", 4096, g, false)
			j.Region, j.Warm, j.Duration = hot, true, 2*time.Second
			j.Untraced = true // a hit is one short system call: a Tracer's clock reads would be a visible share of it
			jobs = append(jobs, j)
		}
	}
	for _, be := range []string{"uring", "os.File"} {
		j := c.job("cold file, buffered, 4 KiB random read, 128 goroutines", be, "randread", 4096, 128, false)
		j.Duration = time.Second // every read brings a page in: keep the file cold
		jobs = append(jobs, j)
	}
	for _, be := range []string{"uring", "os.File"} {
		j := c.job("cold file, buffered, sequential scan, 128 KiB reads, 1 reader", be, "read", 128<<10, 1, false)
		j.Duration = 5 * time.Second
		jobs = append(jobs, j)
	}
	dir, err := os.MkdirTemp(s.e.dir, "testbench-copy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, be := range []string{"uring", "os.File"} {
		j := Job{Group: "io.Copy of a hot 4 MiB file to io.Discard", Label: be, Backend: be, RW: "copy", BS: copyHotSize, G: 1,
			Fsync: "none", Custom: "cache-copy", Dir: dir, Duration: 2 * time.Second}
		if be == "uring" {
			j.Label = "diskio PageCache"
		}
		jobs = append(jobs, j)
	}
	s.note("cache: diskio rows open the file with diskio.PageCache: a read tries preadv2(RWF_NOWAIT) on the caller's goroutine, and only what the page cache lacks goes through the scheduler; hot rows run uninstrumented on both sides (no Tracer, no call counter): their syscalls/op is the kernel's count of read system calls (/proc/self/io syscr), which io_uring's reads do not add to; io.Copy rows: one op is one whole copy of the file")
	return s.runAll(ctx, jobs)
}

const copyHotSize = 4 << 20

// copyHotCustom is the cache preset's io.Copy row (custom.go): the file
// is written and warmed by prepare (in the parent), so every copy is a
// page-cache hit.
var copyHotCustom = &customRun{prepare: copyHotPrepare, run: copyHotRun}

func copyHotPath(j Job) string { return filepath.Join(j.Dir, "hot.dat") }

func copyHotPrepare(_ *env, j Job) error {
	path := copyHotPath(j)
	if _, err := os.Stat(path); err != nil {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		err = bench.Fill(f, copyHotSize, nil)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return warm(path, copyHotSize)
}

// copyHotRun measures io.Copy(io.Discard, f) of the hot file, over and
// over for j.Duration (io.Discard's ReadFrom: a loop of 8 KiB Reads),
// through diskio.PageCache or os.File.
func copyHotRun(ctx context.Context, _ *env, j Job, r *Result, h *bench.Histogram) error {
	path := copyHotPath(j)
	var f io.ReadSeekCloser
	var calls func() int64
	if j.Backend == "os.File" {
		var reads int64 // os.File: one pread per Read
		of, err := os.Open(path)
		if err != nil {
			return err
		}
		f, calls = &countingFile{of, &reads}, func() int64 { return reads }
	} else {
		counter := &syscallCounter{}
		sc, err := sched.New(sched.Options{Backend: sched.URing, FixedBuffers: -1, FixedFiles: -1, Tracer: counter})
		if err != nil {
			return err
		}
		defer sc.Close()
		df, err := diskio.OpenFile(path, os.O_RDONLY, 0, diskio.WithScheduler(sc), diskio.WithDirect(diskio.PageCache))
		if err != nil {
			return err
		}
		f, calls = df, counter.calls.Load
	}
	defer f.Close()
	var n int64
	m := bench.StartMeter()
	deadline := time.Now().Add(j.Duration)
	for first := true; first || ctx.Err() == nil && time.Now().Before(deadline); first = false {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		t0 := time.Now()
		c, err := io.Copy(io.Discard, f)
		if err == nil && c != copyHotSize {
			err = fmt.Errorf("io.Copy copied %d bytes of %d", c, copyHotSize)
		}
		if err != nil {
			return err
		}
		h.Record(time.Since(t0))
		n++
	}
	u := m.Stop()
	r.measured(n, n*copyHotSize, u, h)
	r.SyscallsPerOp = float64(calls()) / float64(n)
	return nil
}

// countingFile counts an *os.File's Read calls. It hides os.File's
// WriteTo, which io.Copy would call instead of Read; for io.Discard that
// comes to the same 8 KiB Read loop.
type countingFile struct {
	f *os.File
	n *int64
}

func (c *countingFile) Read(p []byte) (int, error) {
	*c.n++
	return c.f.Read(p)
}

func (c *countingFile) Seek(off int64, whence int) (int64, error) { return c.f.Seek(off, whence) }
func (c *countingFile) Close() error                              { return c.f.Close() }

// procReadCalls is this process's count of read system calls (syscr in
// /proc/self/io: read, pread64, readv, preadv, preadv2; io_uring's reads
// are not system calls of the process and do not count), or 0 if it
// cannot be read.
func procReadCalls() int64 { return procIO("syscr") }
