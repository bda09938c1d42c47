//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/sched"
)

// presetGlommio runs the phases of Glommio's storage example
// (examples/storage.rs in DataDog/glommio) through diskio's public API on
// one O_DIRECT file, each next to the fio job closest to it, so that anyone
// can put Glommio's own numbers beside them on their machine:
//
//   - random 4 KiB reads from N goroutines (File.ReadAt) | fio QD N
//   - bulk random 4 KiB reads, N goroutines each reading M ranges at once
//     (ReadMany), without merging and merging up to 128 KiB | fio
//     --iodepth=N*M --iodepth_batch_submit=M
//   - a scan in 4 KiB reads, one at a time (StreamReader, read-ahead 1) |
//     fio --iodepth=1
//   - a scan in 4 KiB reads with read-ahead 50, copying (Read) and
//     zero-copy (NextBuffer) | fio --iodepth=50 --iodepth_batch_submit=16
//   - a scan in 512 KiB reads with read-ahead 10 (NextBuffer) | fio
//     --iodepth=10
//
// DISKIO_GLOMMIO_PHASES=random,scan-50 runs only the phases named (random,
// bulk, bulk-merge, scan-1, scan-50, scan-50-zerocopy, scan-512k).
//
// N and M are 50, as in Glommio's example. Each phase is a set of two
// rows, diskio and its fio job (the baseline: a ratio is diskio's over
// fio's), run in runAll's alternating rotated rounds (-rounds) for
// -duration in all (10s by default; scans stop earlier at the end of the
// file, -size), each round on a cold page cache.
func presetGlommio(ctx context.Context, s *suite) error {
	if !s.e.direct {
		return errors.New("glommio: O_DIRECT does not work in " + s.e.dir + " (-dir)")
	}
	// fio's row is the point of this preset: it runs with or without -fio.
	s.c.fio = true
	var jobs []Job
	only := map[string]bool{}
	for _, name := range strings.FieldsFunc(os.Getenv("DISKIO_GLOMMIO_PHASES"), func(r rune) bool { return r == ',' }) {
		if _, err := glommioPhaseOf(Job{Variant: name}); err != nil {
			return err
		}
		only[name] = true
	}
	for _, p := range glommioPhases {
		if len(only) > 0 && !only[p.name] {
			continue
		}
		rw := "read"
		if p.random {
			rw = "randread"
		}
		jobs = append(jobs, Job{Group: p.group, Label: "diskio (uring)", Backend: "uring", RW: rw, BS: p.bs, G: p.g,
			Direct: true, Fsync: "none", Duration: 10 * time.Second, Custom: "glommio", Variant: p.name, Spin: s.c.spin})
	}
	s.note(fmt.Sprintf("glommio: the phases of Glommio's examples/storage.rs on one %s file, each diskio row next to its closest fio job (the baseline of the ratio)", sizeName(s.e.size)))
	return s.runAll(ctx, jobs)
}

const glommioN, glommioM = 50, 50

func glommioFioArgs(rw string, bs, depth, batch int) []string {
	a := []string{"--rw=" + rw, "--bs=" + strconv.Itoa(bs), "--iodepth=" + strconv.Itoa(depth)}
	if batch > 0 {
		a = append(a, "--iodepth_batch_submit="+strconv.Itoa(batch))
	}
	return a
}

// glommioPhases are the phases, each named (Job.Variant) so that a child
// process finds it.
var glommioPhases = []glommioPhase{
	{name: "random", group: fmt.Sprintf("random 4 KiB reads, %d goroutines (ReadAt)", glommioN), g: glommioN, bs: 4096, random: true,
		run: func(f *diskio.File, size int64, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
			return randomReads(f, glommioN, size, h, stop)
		},
		fio: glommioFioArgs("randread", 4096, glommioN, 0)},
	{name: "bulk", group: fmt.Sprintf("bulk random 4 KiB reads, %d goroutines x %d ranges (ReadMany, NoMerge)", glommioN, glommioM), g: glommioN, bs: 4096, random: true,
		run: func(f *diskio.File, size int64, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
			return bulkReads(f, glommioN, glommioM, size, diskio.ReadManyOptions{MaxMerge: diskio.NoMerge}, h, stop)
		},
		fio: glommioFioArgs("randread", 4096, glommioN*glommioM, glommioM)},
	{name: "bulk-merge", group: fmt.Sprintf("bulk random 4 KiB reads, %d goroutines x %d ranges (ReadMany, merging up to 128 KiB)", glommioN, glommioM), g: glommioN, bs: 4096, random: true,
		run: func(f *diskio.File, size int64, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
			return bulkReads(f, glommioN, glommioM, size, diskio.ReadManyOptions{MaxMerge: 128 << 10}, h, stop)
		},
		fio: glommioFioArgs("randread", 4096, glommioN*glommioM, glommioM)},
	{name: "scan-1", group: "scan, 4 KiB reads one at a time (StreamReader, read-ahead 1, Read)", g: 1, bs: 4096,
		run: func(f *diskio.File, _ int64, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
			return scan(f, 4096, 1, false, h, stop)
		},
		fio:  glommioFioArgs("read", 4096, 1, 0),
		note: "1 in flight"},
	{name: "scan-50", group: "scan, 4 KiB reads, read-ahead 50 (Read: copying)", g: 1, bs: 4096,
		run: func(f *diskio.File, _ int64, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
			return scan(f, 4096, 50, false, h, stop)
		},
		fio: glommioFioArgs("read", 4096, 50, 16)},
	{name: "scan-50-zerocopy", group: "scan, 4 KiB reads, read-ahead 50 (NextBuffer: zero-copy)", g: 1, bs: 4096,
		run: func(f *diskio.File, _ int64, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
			return scan(f, 4096, 50, true, h, stop)
		},
		fio: glommioFioArgs("read", 4096, 50, 16)},
	{name: "scan-512k", group: "scan, 512 KiB reads, read-ahead 10 (NextBuffer)", g: 1, bs: 512 << 10,
		run: func(f *diskio.File, _ int64, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
			return scan(f, 512<<10, 10, true, h, stop)
		},
		fio: glommioFioArgs("read", 512<<10, 10, 0)},
}

type glommioPhase struct {
	name   string
	group  string
	g, bs  int
	random bool
	run    func(f *diskio.File, size int64, h *bench.Histogram, stop *atomic.Bool) (ops int64, err error)
	fio    []string // workload arguments
	note   string
}

func glommioPhaseOf(j Job) (glommioPhase, error) {
	for _, p := range glommioPhases {
		if p.name == j.Variant {
			return p, nil
		}
	}
	return glommioPhase{}, fmt.Errorf("glommio: no phase %q", j.Variant)
}

// glommioCustom is the glommio preset's measurement (custom.go): Variant
// names the phase; each run starts on a cold page cache.
var glommioCustom = &customRun{
	prepare: func(e *env, _ Job) error { return dropCache(e.path) },
	run:     glommioDiskio,
	fioLabel: func(j Job) string {
		p, err := glommioPhaseOf(j)
		if err != nil {
			return ""
		}
		return "fio io_uring " + joinArgs(p.fio)
	},
	fio:       glommioFio,
	fioBase:   true,
	fioDirect: true,
}

// glommioDiskio runs one phase through diskio on a scheduler of its own
// with the default options.
func glommioDiskio(ctx context.Context, e *env, j Job, r *Result, h *bench.Histogram) error {
	p, err := glommioPhaseOf(j)
	if err != nil {
		return err
	}
	counter := &syscallCounter{next: e.tracer}
	sch, err := sched.New(sched.Options{Backend: sched.URing, Spin: j.Spin, Tracer: counter})
	if err != nil {
		return err
	}
	defer sch.Close()
	f, err := diskio.OpenFile(e.path, os.O_RDONLY, 0, diskio.WithScheduler(sch), diskio.WithDirect(diskio.DirectRequired))
	if err != nil {
		return err
	}
	defer f.Close()
	var stop atomic.Bool
	timer := time.AfterFunc(j.Duration, func() { stop.Store(true) })
	defer timer.Stop()
	unhook := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer unhook()
	m := bench.StartMeter()
	ops, err := p.run(f, e.size, h, &stop)
	u := m.Stop()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if ops == 0 {
		return errors.New("no operation completed")
	}
	r.measured(ops, ops*int64(p.bs), u, h)
	r.SyscallsPerOp = float64(counter.calls.Load()) / float64(ops)
	r.Direct = f.Direct()
	r.Note = joinNote(p.note, fixedNote(sch))
	return nil
}

func fixedNote(s *sched.Scheduler) string {
	if st := s.Fixed(); !st.Buffers || st.Unregistered > 0 {
		return st.String()
	}
	return ""
}

// glommioFio runs the phase's fio job on the same file, cold.
func glommioFio(ctx context.Context, e *env, j Job) (Result, error) {
	p, err := glommioPhaseOf(j)
	if err != nil {
		return Result{}, err
	}
	bin, err := exec.LookPath("fio")
	if err != nil {
		return Result{}, errors.New("fio is not installed (apt-get install fio)")
	}
	if err := dropCache(e.path); err != nil {
		return Result{}, err
	}
	args := append([]string{"--name=glommio", "--filename=" + e.path, "--size=" + strconv.FormatInt(e.size, 10),
		"--direct=1", "--ioengine=io_uring", "--fixedbufs", "--registerfiles",
		"--runtime=" + strconv.FormatInt(max(1, j.Duration.Milliseconds()), 10) + "ms", "--lat_percentiles=1",
		"--output-format=json", "--randrepeat=0"}, p.fio...)
	if p.random {
		args = append(args, "--time_based")
	}
	return runFio(ctx, bin, args)
}

func joinArgs(a []string) string {
	s := ""
	for _, x := range a[2:] { // the depth arguments; rw and bs are in the group
		s += " " + x
	}
	return s[min(1, len(s)):]
}

// randomReads reads random aligned 4 KiB blocks from g goroutines.
func randomReads(f *diskio.File, g int, size int64, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
	return parallel(g, func(i int) (int64, error) {
		buf, err := mem.Map(4096) // aligned: diskio would bounce unaligned memory
		if err != nil {
			return 0, err
		}
		defer mem.Unmap(buf)
		rng := bench.NewRand(uint64(i) + 1)
		var ops int64
		for !stop.Load() {
			t0 := time.Now()
			if _, err := f.ReadAt(buf, rng.Offset(size, 4096)); err != nil {
				return ops, err
			}
			h.Record(time.Since(t0))
			ops++
		}
		return ops, nil
	})
}

// bulkReads has g goroutines each read m random 4 KiB blocks at once with
// ReadMany, over and over. Latency is per ReadMany call.
func bulkReads(f *diskio.File, g, m int, size int64, opts diskio.ReadManyOptions, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
	return parallel(g, func(i int) (int64, error) {
		rng := bench.NewRand(uint64(i) + 1000)
		ranges := make([]diskio.Range, m)
		var bufs []*diskio.Buffer
		var ops int64
		for !stop.Load() {
			for k := range ranges {
				ranges[k] = diskio.Range{Off: rng.Offset(size, 4096), Len: 4096}
			}
			var err error
			t0 := time.Now()
			if bufs, err = f.ReadMany(ranges, opts); err != nil {
				return ops, err
			}
			h.Record(time.Since(t0))
			for _, b := range bufs {
				if len(b.Bytes()) != 4096 {
					return ops, io.ErrUnexpectedEOF
				}
				b.Release()
			}
			ops += int64(m)
		}
		return ops, nil
	})
}

// scan reads the file front to back with a StreamReader, copying (Read)
// or not (NextBuffer), until the end or stop; ops are bs-sized reads.
func scan(f *diskio.File, bs, depth int, zeroCopy bool, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
	r, err := f.NewStreamReader(0, diskio.StreamOptions{BufferSize: bs, ReadAhead: depth})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	p := make([]byte, bs)
	for !stop.Load() {
		t0 := time.Now()
		if zeroCopy {
			b, err := r.NextBuffer()
			if err == io.EOF {
				break
			}
			if err != nil {
				return n / int64(bs), err
			}
			n += int64(len(b.Bytes()))
			b.Release()
			h.Record(time.Since(t0))
			continue
		}
		m, err := io.ReadFull(r, p)
		n += int64(m)
		h.Record(time.Since(t0))
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return n / int64(bs), err
		}
	}
	return n / int64(bs), nil
}

// parallel runs body on g goroutines and sums their operations.
func parallel(g int, body func(i int) (int64, error)) (int64, error) {
	var wg sync.WaitGroup
	var total atomic.Int64
	errs := make(chan error, g)
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := body(i)
			total.Add(n)
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return total.Load(), <-errs
}
