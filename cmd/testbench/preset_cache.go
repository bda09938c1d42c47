//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
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
	if err := s.runAll(ctx, jobs); err != nil {
		return err
	}
	s.note("cache: diskio rows open the file with diskio.PageCache: a read tries preadv2(RWF_NOWAIT) on the caller's goroutine, and only what the page cache lacks goes through the scheduler")
	return s.copyHot(ctx)
}

// copyHot measures io.Copy(io.Discard, f) of a hot 4 MiB file (io.Discard's
// ReadFrom: a loop of 8 KiB Reads), os.File against diskio.PageCache,
// in alternating rounds in this process.
func (s *suite) copyHot(ctx context.Context) error {
	const size, rounds, perRound = 4 << 20, 10, 20
	const group = "io.Copy of a hot 4 MiB file to io.Discard"
	f, err := s.e.fl.create(s.e.dir, "testbench-copy-*.dat")
	if err != nil {
		return err
	}
	path := f.Name()
	defer s.e.fl.remove(path)
	err = bench.Fill(f, size, nil)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := warm(path, size); err != nil {
		return err
	}
	counter := &syscallCounter{}
	sc, err := sched.New(sched.Options{Backend: sched.URing, FixedBuffers: -1, FixedFiles: -1, Tracer: counter})
	if err != nil {
		return err
	}
	defer sc.Close()
	type side struct {
		label, backend string
		open           func() (io.ReadSeekCloser, error)
		h              bench.Histogram
		cpu            time.Duration
		allocs         uint64
		threads        int
		n              int64
		elapsed        time.Duration
		syscalls       func() int64
	}
	var osReads int64 // os.File: one pread per Read
	sides := []*side{
		{label: "diskio PageCache", backend: "uring", open: func() (io.ReadSeekCloser, error) {
			return diskio.OpenFile(path, os.O_RDONLY, 0, diskio.WithScheduler(sc), diskio.WithDirect(diskio.PageCache))
		}, syscalls: counter.calls.Load},
		{label: "os.File", backend: "os.File", open: func() (io.ReadSeekCloser, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			return &countingFile{f, &osReads}, nil
		}, syscalls: func() int64 { return osReads }},
	}
	done := s.e.prog.start(group, 0)
	defer done()
	for range rounds {
		for _, sd := range sides {
			r, err := sd.open()
			if err != nil {
				return err
			}
			m := bench.StartMeter()
			for range perRound {
				if _, err := r.Seek(0, io.SeekStart); err != nil {
					r.Close()
					return err
				}
				t0 := time.Now()
				n, err := io.Copy(io.Discard, r)
				if err == nil && n != size {
					err = fmt.Errorf("io.Copy copied %d bytes of %d", n, size)
				}
				if err != nil {
					r.Close()
					return err
				}
				sd.h.Record(time.Since(t0))
				sd.n++
			}
			u := m.Stop()
			sd.cpu += u.CPU
			sd.allocs += u.Allocs
			sd.elapsed += u.Elapsed
			sd.threads = max(sd.threads, u.PeakThreads)
			r.Close()
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	for _, sd := range sides {
		sec := sd.elapsed.Seconds()
		h := &sd.h
		s.rep.Results = append(s.rep.Results, Result{Group: group, Label: sd.label, Backend: sd.backend, Workload: "copy",
			Goroutines: 1, BlockSize: size, Fsync: "none", Base: sd.backend == "os.File",
			IOPS: float64(sd.n) / sec, MBPerS: float64(sd.n*size) / sec / 1e6,
			Lat: Latency{P50: us(h.Quantile(0.5)), P90: us(h.Quantile(0.9)), P99: us(h.Quantile(0.99)),
				P999: us(h.Quantile(0.999)), Max: us(h.Max()), Mean: us(h.Mean())},
			CPUUsPerOp: float64(sd.cpu.Nanoseconds()) / 1e3 / float64(sd.n), ThreadsPeak: sd.threads,
			AllocsPerOp: float64(sd.allocs) / float64(sd.n), SyscallsPerOp: float64(sd.syscalls()) / float64(sd.n), Ops: sd.n, Bytes: sd.n * size, Seconds: sec,
			Note: "in the parent process, alternating rounds; one op is one whole copy"})
		s.hists = append(s.hists, h)
	}
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
