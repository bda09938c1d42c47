//go:build linux

package diskio_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/sched"
)

// BenchmarkWorkerCaps compares caps on io_uring's worker pool
// (sched.Options.IOWQMaxWorkers) side by side in one process: one
// scheduler per cap, each with its own locked loop and so its own pool,
// and every workload run on each in turn in short slices, the order
// rotated each round, so that a busy machine's drift falls on all caps
// alike (separate processes of a few seconds each moved 0.6-1.7x between
// rounds). The workloads are the durable ones that need workers: group
// commit of 64 writers (4 KiB WriteAt + Datasync each) on a recycled log
// (written and synced beforehand) and on a preallocated one (unwritten
// extents, preallocated afresh before each slice), and a durable stream
// (a new file in 512 KiB StreamWriter writes, 8 in flight, and a
// Datasync), and the many-files case: 64 writers each extending
// a file of its own in 64 KiB writes with a Datasync every fourth (the
// files truncated before each slice). It reports, per workload and cap, the median over rounds of
// the cap's rate against the kernel's default size of a pool, 4 per CPU,
// set as a cap too: with no cap registered (-1) a loop's thread keeps the
// limits of the first ring it ever submitted to, which in a process of
// several schedulers may be another one's.
//
//	DISKIO_BENCH_CAP_ROUNDS=30 go test -run '^$' -bench WorkerCaps -benchtime 1x .
func BenchmarkWorkerCaps(b *testing.B) {
	ref := 4 * runtime.NumCPU()
	caps := []int{ref, 1, 2, 4, 8}
	if i := slices.Index(caps[1:], ref); i >= 0 {
		caps = slices.Delete(caps, i+1, i+2)
	}
	rounds := 10
	if s := os.Getenv("DISKIO_BENCH_CAP_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("DISKIO_BENCH_CAP_ROUNDS=%q: want a count", s)
		}
		rounds = n
	}
	const writers, size, commits = 64, 4096, 4000
	const streamSize, bs = 32 << 20, 512 << 10
	logSize := int64(commits+writers) * size
	dir := benchDir(b)

	type capRun struct {
		cap                int
		s                  *sched.Scheduler
		recycled, prealloc *diskio.File
		own                []*diskio.File // one per writer
		stream             string
	}
	runs := make([]*capRun, len(caps))
	for i, c := range caps {
		s, err := sched.New(sched.Options{Backend: sched.URing, IOWQMaxWorkers: c})
		if err != nil {
			b.Skip("io_uring:", err)
		}
		defer s.Close()
		r := &capRun{cap: c, s: s, stream: filepath.Join(dir, fmt.Sprintf("caps-stream-%d", i))}
		open := func(name string) *diskio.File {
			f, err := diskio.OpenFile(filepath.Join(dir, fmt.Sprintf("caps-%s-%d", name, i)), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, diskio.WithScheduler(s))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { f.Close(); os.Remove(f.Name()) })
			return f
		}
		r.recycled, r.prealloc = open("recycled"), open("prealloc")
		for w := range writers {
			r.own = append(r.own, open(fmt.Sprintf("own%d", w)))
		}
		buf := make([]byte, 1<<20)
		for off := int64(0); off < logSize; off += int64(len(buf)) {
			if _, err := r.recycled.WriteAt(buf[:min(int64(len(buf)), logSize-off)], off); err != nil {
				b.Fatal(err)
			}
		}
		if err := r.recycled.Datasync(); err != nil {
			b.Fatal(err)
		}
		runs[i] = r
	}

	// groupCommit returns commits/s of 64 writers appending to f.
	groupCommit := func(f *diskio.File) float64 {
		var next atomic.Int64
		var failed atomic.Value
		start := time.Now()
		var wg sync.WaitGroup
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := mem.Map(size)
				if err != nil {
					failed.Store(err)
					return
				}
				defer mem.Unmap(p)
				p[0] = byte(g)
				for range commits / writers {
					if _, err := f.WriteAt(p, next.Add(size)-size); err != nil {
						failed.Store(err)
						return
					}
					if err := f.Datasync(); err != nil {
						failed.Store(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
		return float64(commits/writers*writers) / time.Since(start).Seconds()
	}
	// stream returns MB/s of a durable sequential write of a new file.
	chunk := randomBytes(bs, 1)
	stream := func(r *capRun) float64 {
		os.Remove(r.stream)
		start := time.Now()
		f, err := diskio.OpenFile(r.stream, os.O_RDWR|os.O_CREATE, 0o644, diskio.WithDirect(diskio.DirectRequired), diskio.WithScheduler(r.s))
		if err != nil {
			b.Fatal(err)
		}
		defer os.Remove(r.stream)
		defer f.Close()
		w, err := f.NewStreamWriter(0, diskio.StreamOptions{BufferSize: bs, ReadAhead: 8})
		if err != nil {
			b.Fatal(err)
		}
		for off := 0; off < streamSize; off += bs {
			if _, err := w.Write(chunk); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		if err := f.Datasync(); err != nil {
			b.Fatal(err)
		}
		return streamSize / time.Since(start).Seconds() / 1e6
	}
	// ownFiles returns writes/s of 64 writers extending their own files.
	const ownSize, ownWrites = 64 << 10, 16
	ownBuf, err := mem.Map(ownSize)
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Unmap(ownBuf)
	ownFiles := func(r *capRun) float64 {
		for _, f := range r.own {
			if err := f.Truncate(0); err != nil {
				b.Fatal(err)
			}
		}
		var failed atomic.Value
		start := time.Now()
		var wg sync.WaitGroup
		for _, f := range r.own {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range ownWrites {
					if _, err := f.WriteAt(ownBuf, int64(i*ownSize)); err != nil {
						failed.Store(err)
						return
					}
					if i%4 == 3 {
						if err := f.Datasync(); err != nil {
							failed.Store(err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
		return float64(writers*ownWrites) / time.Since(start).Seconds()
	}
	workloads := []struct {
		name string
		unit string
		run  func(r *capRun) float64
	}{
		{"group-commit-recycled", "commits/s", func(r *capRun) float64 { return groupCommit(r.recycled) }},
		{"group-commit-prealloc", "commits/s", func(r *capRun) float64 {
			if err := r.prealloc.Truncate(0); err != nil {
				b.Fatal(err)
			}
			if err := r.prealloc.Preallocate(0, logSize); err != nil {
				b.Fatal(err)
			}
			return groupCommit(r.prealloc)
		}},
		{"stream", "MB/s", stream},
		{"own-files", "writes/s", ownFiles},
	}

	// rates[w][c] holds a workload's rate on a cap, one per round.
	rates := make([][][]float64, len(workloads))
	for w := range rates {
		rates[w] = make([][]float64, len(caps))
	}
	b.ResetTimer()
	for range b.N {
		for round := range rounds {
			for w, wl := range workloads {
				for k := range caps {
					c := (k + round) % len(caps)
					rates[w][c] = append(rates[w][c], wl.run(runs[c]))
				}
			}
		}
	}
	b.StopTimer()
	for w, wl := range workloads {
		for c, cp := range caps {
			ratios := make([]float64, len(rates[w][c]))
			for i, v := range rates[w][c] {
				ratios[i] = v / rates[w][0][i]
			}
			if c > 0 {
				b.ReportMetric(capMedian(ratios), fmt.Sprintf("x-%s-cap%d", wl.name, cp))
			}
			slices.Sort(ratios)
			fmt.Printf("%s cap %d: median %.0f %s, %.2fx of cap %d (quartiles %.2f-%.2f) over %d rounds\n",
				wl.name, cp, capMedian(rates[w][c]), wl.unit, capMedian(ratios), ref, ratios[len(ratios)/4], ratios[len(ratios)*3/4], len(ratios))
		}
	}
}

func capMedian(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
