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
// N and M are 50, as in Glommio's example. Each phase
// runs for -duration (scans stop earlier at the end of the file, -size),
// twice, alternating diskio and fio (round 1: diskio first; round 2: fio
// first); a row's ratio is against fio's row of the same round.
func presetGlommio(ctx context.Context, s *suite) error {
	if !s.e.direct {
		return errors.New("glommio: O_DIRECT does not work in " + s.e.dir + " (-dir)")
	}
	const n, m = 50, 50
	dur := 5 * time.Second
	if s.c.durSet {
		dur = s.c.duration
	}
	fio := func(rw string, bs, depth, batch int) []string {
		a := []string{"--rw=" + rw, "--bs=" + strconv.Itoa(bs), "--iodepth=" + strconv.Itoa(depth)}
		if batch > 0 {
			a = append(a, "--iodepth_batch_submit="+strconv.Itoa(batch))
		}
		return a
	}
	phases := []glommioPhase{
		{group: fmt.Sprintf("random 4 KiB reads, %d goroutines (ReadAt)", n), g: n, bs: 4096, random: true,
			run: func(f *diskio.File, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
				return randomReads(f, n, s.e.size, h, stop)
			},
			fio: fio("randread", 4096, n, 0)},
		{group: fmt.Sprintf("bulk random 4 KiB reads, %d goroutines x %d ranges (ReadMany, NoMerge)", n, m), g: n, bs: 4096, random: true,
			run: func(f *diskio.File, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
				return bulkReads(f, n, m, s.e.size, diskio.ReadManyOptions{MaxMerge: diskio.NoMerge}, h, stop)
			},
			fio: fio("randread", 4096, n*m, m)},
		{group: fmt.Sprintf("bulk random 4 KiB reads, %d goroutines x %d ranges (ReadMany, merging up to 128 KiB)", n, m), g: n, bs: 4096, random: true,
			run: func(f *diskio.File, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
				return bulkReads(f, n, m, s.e.size, diskio.ReadManyOptions{MaxMerge: 128 << 10}, h, stop)
			},
			fio: fio("randread", 4096, n*m, m)},
		{group: "scan, 4 KiB reads one at a time (StreamReader, read-ahead 1, Read)", g: 1, bs: 4096,
			run: func(f *diskio.File, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
				return scan(f, 4096, 1, false, h, stop)
			},
			fio:  fio("read", 4096, 1, 0),
			note: "1 in flight"},
		{group: "scan, 4 KiB reads, read-ahead 50 (Read: copying)", g: 1, bs: 4096,
			run: func(f *diskio.File, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
				return scan(f, 4096, 50, false, h, stop)
			},
			fio: fio("read", 4096, 50, 16)},
		{group: "scan, 4 KiB reads, read-ahead 50 (NextBuffer: zero-copy)", g: 1, bs: 4096,
			run: func(f *diskio.File, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
				return scan(f, 4096, 50, true, h, stop)
			},
			fio: fio("read", 4096, 50, 16)},
		{group: "scan, 512 KiB reads, read-ahead 10 (NextBuffer)", g: 1, bs: 512 << 10,
			run: func(f *diskio.File, h *bench.Histogram, stop *atomic.Bool) (int64, error) {
				return scan(f, 512<<10, 10, true, h, stop)
			},
			fio: fio("read", 512<<10, 10, 0)},
	}
	s.e.prog.total += 4 * len(phases)
	for _, p := range phases {
		for round := 1; round <= 2; round++ {
			group := fmt.Sprintf("%s, round %d", p.group, round)
			d := s.glommioDiskio(p, group, dur)
			if err := ctx.Err(); err != nil {
				return err
			}
			f := s.glommioFio(ctx, p, group, dur)
			if err := ctx.Err(); err != nil {
				return err
			}
			rows := []Result{d, f}
			if round == 2 {
				rows = []Result{f, d}
			}
			for _, r := range rows {
				s.rep.Results = append(s.rep.Results, r)
				s.hists = append(s.hists, nil)
			}
		}
	}
	s.note(fmt.Sprintf("glommio: the phases of Glommio's examples/storage.rs on one %s file, each diskio row next to its closest fio job (ratio: against fio of the same round; round 2 runs fio first); diskio runs in this process, so its thread peak includes the testbench's own threads", sizeName(s.e.size)))
	return nil
}

type glommioPhase struct {
	group  string
	g, bs  int
	random bool
	run    func(f *diskio.File, h *bench.Histogram, stop *atomic.Bool) (ops int64, err error)
	fio    []string // workload arguments
	note   string
}

// glommioDiskio runs one phase through diskio on a scheduler of its own
// with the default options.
func (s *suite) glommioDiskio(p glommioPhase, group string, dur time.Duration) Result {
	r := Result{Group: group, Label: "diskio (uring)", Backend: "uring", Workload: "read", Goroutines: p.g,
		BlockSize: p.bs, Direct: true, Fsync: "none"}
	if p.random {
		r.Workload = "randread"
	}
	fail := func(err error) Result { r.Error = err.Error(); return r }
	if err := dropCache(s.e.path); err != nil {
		return fail(err)
	}
	counter := &syscallCounter{next: s.e.tracer}
	sch, err := sched.New(sched.Options{Backend: sched.URing, Tracer: counter})
	if err != nil {
		return fail(err)
	}
	defer sch.Close()
	f, err := diskio.OpenFile(s.e.path, os.O_RDONLY, 0, diskio.WithScheduler(sch), diskio.WithDirect(diskio.DirectRequired))
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	var stop atomic.Bool
	timer := time.AfterFunc(dur, func() { stop.Store(true) })
	defer timer.Stop()
	done := s.e.prog.start(group+": diskio", dur)
	h := new(bench.Histogram)
	m := bench.StartMeter()
	ops, err := p.run(f, h, &stop)
	u := m.Stop()
	done()
	if err != nil {
		return fail(err)
	}
	if ops == 0 {
		return fail(errors.New("no operation completed"))
	}
	sec := u.Elapsed.Seconds()
	r.Ops, r.Bytes, r.Seconds = ops, ops*int64(p.bs), sec
	r.IOPS, r.MBPerS = float64(ops)/sec, float64(r.Bytes)/sec/1e6
	r.CPUUsPerOp = float64(u.CPU.Nanoseconds()) / 1e3 / float64(ops)
	r.ThreadsPeak = u.PeakThreads
	r.AllocsPerOp = float64(u.Allocs) / float64(ops)
	r.SyscallsPerOp = float64(counter.calls.Load()) / float64(ops)
	r.Lat = Latency{P50: us(h.Quantile(0.5)), P90: us(h.Quantile(0.9)), P99: us(h.Quantile(0.99)),
		P999: us(h.Quantile(0.999)), Max: us(h.Max()), Mean: us(h.Mean())}
	r.Note = joinNote(p.note, fixedNote(sch))
	return r
}

func fixedNote(s *sched.Scheduler) string {
	if st := s.Fixed(); !st.Buffers || st.Unregistered > 0 {
		return st.String()
	}
	return ""
}

// glommioFio runs the phase's fio job on the same file, cold.
func (s *suite) glommioFio(ctx context.Context, p glommioPhase, group string, dur time.Duration) Result {
	r := Result{Group: group, Label: "fio io_uring", Backend: "fio", Workload: "read", Goroutines: p.g,
		BlockSize: p.bs, Direct: true, Fsync: "none", Base: true}
	if p.random {
		r.Workload = "randread"
	}
	bin, err := exec.LookPath("fio")
	if err != nil {
		r.Error = "fio is not installed (apt-get install fio)"
		return r
	}
	if err := dropCache(s.e.path); err != nil {
		r.Error = err.Error()
		return r
	}
	args := append([]string{"--name=glommio", "--filename=" + s.e.path, "--size=" + strconv.FormatInt(s.e.size, 10),
		"--direct=1", "--ioengine=io_uring", "--fixedbufs", "--registerfiles",
		"--runtime=" + strconv.FormatInt(dur.Milliseconds(), 10) + "ms", "--lat_percentiles=1",
		"--output-format=json", "--randrepeat=0"}, p.fio...)
	if p.random {
		args = append(args, "--time_based")
	}
	done := s.e.prog.start(group+": fio", dur)
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	done()
	if err != nil {
		r.Error = fmt.Sprintf("fio %v: %v", p.fio, err)
		return r
	}
	res, err := parseFio(out)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	res.Group, res.Label, res.Backend, res.Workload = r.Group, r.Label+" "+joinArgs(p.fio), r.Backend, r.Workload
	res.Goroutines, res.BlockSize, res.Direct, res.Fsync, res.Base = r.Goroutines, r.BlockSize, r.Direct, r.Fsync, true
	return res
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
			if bufs, err = f.AppendReadMany(bufs[:0], ranges, opts); err != nil {
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
