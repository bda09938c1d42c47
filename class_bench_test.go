//go:build linux

package diskio_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/benchfile"
	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/sched"
)

// BenchmarkCommitBesideReads is the conflict I/O classes are for: one
// writer appending 4 KiB to a log and waiting for each with Datasync (a
// WAL's synced commits; a page-cache file, as Pebble's WAL), beside 32
// goroutines reading 4 KiB at random from a 2 GiB file O_DIRECT (cold
// reads, as a compaction's or a scan's). Each configuration runs three
// phases per round: the writer alone, the readers alone, both together;
// rounds rotate the order of the configurations, so drift falls on all
// alike. It reports, per configuration, the medians over rounds of the
// writer's p99 commit latency together against alone, and the readers'
// IOPS together against alone.
//
// Configurations (DISKIO_CLASS_CONFIGS, comma-separated; default
// "os.File,off,on,fio"): os.File (both through *os.File), fio (the
// device's own answer, with no Go in it: a psync job writing 4 KiB with
// fdatasync after each, and an io_uring job of 32 O_DIRECT random 4 KiB
// reads in flight, run as the three phases in the same rounds; its
// latency is the fdatasync's p99, as fio reports syncs apart from writes;
// skipped if fio is not installed), off (diskio with
// sched.ClassOptions.Off), on (diskio, the default ClassOptions: the
// writer's File sched.Latency, the readers' sched.Background), and
// variants of on with options after colons: goal=DURATION, hold=DURATION,
// min=N (MinBackground), prio=none|idle|be7 (the readers' ioprio; the
// writer's is BE level 0 when set).
//
//	DISKIO_BENCH_ROUNDS=5 DISKIO_BENCH_PHASE=2s go test -run '^$' -bench CommitBesideReads -benchtime 1x .
func BenchmarkCommitBesideReads(b *testing.B) {
	rounds := envInt(b, "DISKIO_BENCH_ROUNDS", 5)
	phase := 2 * time.Second
	if s := os.Getenv("DISKIO_BENCH_PHASE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("DISKIO_BENCH_PHASE: %v", err)
		}
		phase = d
	}
	specs := []string{"os.File", "off", "on", "fio"}
	if s := os.Getenv("DISKIO_CLASS_CONFIGS"); s != "" {
		specs = strings.Split(s, ",")
	}
	const readers, size = 32, 4096
	dataSize := max(benchfile.Size(), 2<<30)
	data := benchfile.Shared(b, dataSize)
	dir := benchDir(b)

	type config struct {
		name   string
		fio    bool // run by fio (fioPhase), not by this process
		s      *sched.Scheduler
		read   func(p []byte, off int64) (int, error)
		open   func(name string) (write func([]byte) error, sync func() error, closeFn func())
		stats  sched.Stats
		alone  []float64 // writer p99 alone, µs
		with   []float64 // writer p99 beside readers, µs
		p50a   []float64
		p50w   []float64
		iopsA  []float64 // readers alone
		iopsW  []float64 // readers beside the writer
		commit []float64 // commits/s beside readers
		// The scheduler's view of the phases beside readers: the
		// writer's fdatasyncs and the readers' reads.
		syncDev, syncQ, readDev, writeDev sched.Histogram
	}
	var configs []*config
	for _, spec := range specs {
		c := &config{name: spec}
		if spec == "fio" {
			if _, err := exec.LookPath("fio"); err != nil {
				b.Logf("fio: not installed, its configuration is left out")
				continue
			}
			c.fio = true
			configs = append(configs, c)
			continue
		}
		if spec == "os.File" {
			f, err := os.OpenFile(data, os.O_RDONLY|unix.O_DIRECT, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			c.read = f.ReadAt
			c.open = func(name string) (func([]byte) error, func() error, func()) {
				w, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				return func(p []byte) error { _, err := w.Write(p); return err }, func() error { return unix.Fdatasync(int(w.Fd())) }, func() { w.Close(); os.Remove(name) }
			}
			configs = append(configs, c)
			continue
		}
		opts, err := classOptions(spec)
		if err != nil {
			b.Fatal(err)
		}
		s, err := sched.New(sched.Options{Backend: sched.URing, Classes: opts})
		if err != nil {
			b.Skip("io_uring:", err)
		}
		defer s.Close()
		c.s = s
		f, err := diskio.OpenFile(data, os.O_RDONLY, 0, diskio.WithScheduler(s), diskio.WithDirect(diskio.DirectRequired), diskio.WithClass(sched.Background))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		c.read = f.ReadAt
		c.open = func(name string) (func([]byte) error, func() error, func()) {
			w, err := diskio.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, diskio.WithScheduler(s), diskio.WithDirect(diskio.PageCache), diskio.WithClass(sched.Latency))
			if err != nil {
				b.Fatal(err)
			}
			return func(p []byte) error { _, err := w.Write(p); return err }, w.Datasync, func() { w.Close(); os.Remove(name) }
		}
		configs = append(configs, c)
	}

	// writer appends and syncs until stop, and returns its commit
	// latencies.
	writer := func(c *config, stop *atomic.Bool) []time.Duration {
		write, sync, closeFn := c.open(filepath.Join(dir, "commit-log"))
		defer closeFn()
		p := make([]byte, size)
		var lat []time.Duration
		for !stop.Load() {
			p[0]++
			start := time.Now()
			if err := write(p); err != nil {
				b.Fatal(err)
			}
			if err := sync(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		return lat
	}
	bufs, err := mem.Map(readers * size)
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Unmap(bufs)
	// readRun reads until stop and returns the reads done.
	readRun := func(c *config, stop *atomic.Bool, seed uint64) int64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		for g := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := bench.NewRand(seed + uint64(g))
				p := bufs[g*size : (g+1)*size]
				for !stop.Load() {
					off := rng.Offset(dataSize, size)
					if k, err := c.read(p, off); k != size {
						panic(fmt.Sprintf("read at %d: %d, %v", off, k, err))
					}
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		return n.Load()
	}
	timed := func(fns ...func(stop *atomic.Bool)) {
		var stop atomic.Bool
		var wg sync.WaitGroup
		for _, fn := range fns {
			wg.Add(1)
			go func() { defer wg.Done(); fn(&stop) }()
		}
		time.Sleep(phase)
		stop.Store(true)
		wg.Wait()
	}
	b.ResetTimer()
	for r := range rounds {
		for i := range configs {
			c := configs[(i+r)%len(configs)]
			seed := uint64(time.Now().UnixNano())
			if c.fio {
				alone, _ := fioPhase(b, dir, data, dataSize, size, readers, phase, true, false)
				_, readsAlone := fioPhase(b, dir, data, dataSize, size, readers, phase, false, true)
				with, readsWith := fioPhase(b, dir, data, dataSize, size, readers, phase, true, true)
				c.alone = append(c.alone, us(alone.p99))
				c.with = append(c.with, us(with.p99))
				c.p50a = append(c.p50a, us(alone.p50))
				c.p50w = append(c.p50w, us(with.p50))
				c.iopsA = append(c.iopsA, readsAlone)
				c.iopsW = append(c.iopsW, readsWith)
				c.commit = append(c.commit, with.rate)
				continue
			}
			var alone, with []time.Duration
			var readsAlone, readsWith int64
			timed(func(stop *atomic.Bool) { alone = writer(c, stop) })
			timed(func(stop *atomic.Bool) { readsAlone = readRun(c, stop, seed) })
			var before, after sched.Stats
			if c.s != nil {
				c.s.ReadStats(&before)
			}
			timed(func(stop *atomic.Bool) { with = writer(c, stop) },
				func(stop *atomic.Bool) { readsWith = readRun(c, stop, seed+1000) })
			if c.s != nil {
				c.s.ReadStats(&after)
				addDiff(&c.syncDev, &after.Ops[sched.OpFdatasync][sched.Latency].Device, &before.Ops[sched.OpFdatasync][sched.Latency].Device)
				addDiff(&c.syncQ, &after.Ops[sched.OpFdatasync][sched.Latency].Queue, &before.Ops[sched.OpFdatasync][sched.Latency].Queue)
				addDiff(&c.writeDev, &after.Ops[sched.OpWrite][sched.Latency].Device, &before.Ops[sched.OpWrite][sched.Latency].Device)
				addDiff(&c.readDev, &after.Ops[sched.OpRead][sched.Background].Device, &before.Ops[sched.OpRead][sched.Background].Device)
			}
			c.alone = append(c.alone, us(quantile(alone, 0.99)))
			c.with = append(c.with, us(quantile(with, 0.99)))
			c.p50a = append(c.p50a, us(quantile(alone, 0.5)))
			c.p50w = append(c.p50w, us(quantile(with, 0.5)))
			c.iopsA = append(c.iopsA, float64(readsAlone)/phase.Seconds())
			c.iopsW = append(c.iopsW, float64(readsWith)/phase.Seconds())
			c.commit = append(c.commit, float64(len(with))/phase.Seconds())
		}
	}
	b.StopTimer()
	for _, c := range configs {
		ratios := func(x, y []float64) []float64 {
			r := make([]float64, len(x))
			for i := range x {
				r[i] = x[i] / y[i]
			}
			return r
		}
		lat, iops := median(ratios(c.with, c.alone)), median(ratios(c.iopsW, c.iopsA))
		name := strings.NewReplacer(":", "_", "=", "").Replace(c.name)
		b.ReportMetric(lat, name+"-p99x")
		b.ReportMetric(iops, name+"-readsx")
		extra := ""
		if c.s != nil {
			c.s.ReadStats(&c.stats)
			extra = fmt.Sprintf("; bound now %d; beside reads, in the scheduler: fdatasync device p50 %.0fµs p99 %.0fµs (queue p99 %.0fµs), write device p99 %.0fµs (%d), read device p50 %.0fµs p99 %.0fµs",
				c.stats.BackgroundBound, us(c.syncDev.Quantile(0.5)), us(c.syncDev.Quantile(0.99)), us(c.syncQ.Quantile(0.99)),
				us(c.writeDev.Quantile(0.99)), c.writeDev.Count(), us(c.readDev.Quantile(0.5)), us(c.readDev.Quantile(0.99)))
		}
		b.Logf("%-28s commit p99 alone %6.0fµs beside reads %6.0fµs (%.2fx; per round %s), p50 %4.0f/%4.0fµs, %4.0f commits/s beside; reads alone %6.0f/s beside %6.0f/s (%.2fx; per round %s)%s",
			c.name, median(c.alone), median(c.with), lat, fmtRatios(ratios(c.with, c.alone)),
			median(c.p50a), median(c.p50w), median(c.commit),
			median(c.iopsA), median(c.iopsW), iops, fmtRatios(ratios(c.iopsW, c.iopsA)), extra)
	}
}

// fioSyncs is what fioPhase reports of the writer: its fdatasyncs'
// latency quantiles and how many commits it made per second.
type fioSyncs struct {
	p50, p99 time.Duration
	rate     float64
}

// fioPhase runs one phase of BenchmarkCommitBesideReads with fio, for
// phase: the writer (4 KiB appends to a new file in dir, each followed by
// fdatasync, through the page cache) if write, the readers (32 O_DIRECT
// 4 KiB random reads in flight on data, io_uring) if read, both at once
// if both. It returns the writer's syncs and the readers' IOPS.
func fioPhase(b *testing.B, dir, data string, dataSize int64, size, readers int, phase time.Duration, write, read bool) (fioSyncs, float64) {
	b.Helper()
	runtime := "--runtime=" + strconv.FormatInt(phase.Milliseconds(), 10) + "ms"
	log := filepath.Join(dir, "fio-commit-log")
	defer os.Remove(log)
	args := []string{"--output-format=json", "--lat_percentiles=1", "--percentile_list=50:99", "--randrepeat=0"}
	if write {
		args = append(args, "--name=writer", "--filename="+log, "--rw=write", "--bs="+strconv.Itoa(size),
			"--size=1g", "--ioengine=psync", "--fdatasync=1", "--fallocate=none", "--time_based", runtime)
	}
	if read {
		args = append(args, "--name=readers", "--filename="+data, "--size="+strconv.FormatInt(dataSize, 10),
			"--rw=randread", "--bs="+strconv.Itoa(size), "--direct=1", "--ioengine=io_uring",
			"--iodepth="+strconv.Itoa(readers), "--time_based", runtime)
	}
	out, err := exec.Command("fio", args...).Output()
	if err != nil {
		b.Fatalf("fio %s: %v", strings.Join(args, " "), err)
	}
	var res struct {
		Jobs []struct {
			Name string `json:"jobname"`
			Read struct {
				IOPS float64 `json:"iops"`
			} `json:"read"`
			Write struct {
				TotalIOs int64 `json:"total_ios"` // one fdatasync each (fio's sync total_ios stays 0)
			} `json:"write"`
			Sync struct {
				Lat struct {
					Percentile map[string]float64 `json:"percentile"`
				} `json:"lat_ns"`
			} `json:"sync"`
			Runtime float64 `json:"job_runtime"` // ms
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatalf("fio's output: %v", err)
	}
	var syncs fioSyncs
	var iops float64
	for _, j := range res.Jobs {
		switch j.Name {
		case "writer":
			p := j.Sync.Lat.Percentile
			if p["99.000000"] == 0 {
				b.Fatalf("fio reported no fdatasync latencies")
			}
			syncs.p50 = time.Duration(p["50.000000"])
			syncs.p99 = time.Duration(p["99.000000"])
			syncs.rate = float64(j.Write.TotalIOs) / (j.Runtime / 1000)
		case "readers":
			iops = j.Read.IOPS
		}
	}
	return syncs, iops
}

// classOptions parses a configuration of BenchmarkCommitBesideReads.
func classOptions(spec string) (sched.ClassOptions, error) {
	parts := strings.Split(spec, ":")
	var o sched.ClassOptions
	switch parts[0] {
	case "off":
		o.Off = true
	case "on":
	default:
		return o, fmt.Errorf("unknown configuration %q (want os.File, off, on[:option...])", spec)
	}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		var err error
		switch k {
		case "goal":
			o.Goal, err = time.ParseDuration(v)
		case "hold":
			o.Hold, err = time.ParseDuration(v)
		case "min":
			o.MinBackground, err = strconv.Atoi(v)
		case "prio":
			switch v {
			case "none":
				o.NoIoprio = true
			case "idle":
				o.Ioprio = [sched.NumClasses]sched.Ioprio{sched.Latency: sched.MakeIoprio(sched.IoprioBestEffort, 0), sched.Background: sched.MakeIoprio(sched.IoprioIdle, 0)}
			case "be7":
				o.Ioprio = [sched.NumClasses]sched.Ioprio{sched.Latency: sched.MakeIoprio(sched.IoprioBestEffort, 0), sched.Background: sched.MakeIoprio(sched.IoprioBestEffort, 7)}
			case "rt":
				o.Ioprio = [sched.NumClasses]sched.Ioprio{sched.Latency: sched.MakeIoprio(sched.IoprioRealTime, 4), sched.Background: sched.MakeIoprio(sched.IoprioBestEffort, 4)}
			default:
				err = fmt.Errorf("prio=%s: want none, idle, be7 or rt", v)
			}
		default:
			err = fmt.Errorf("unknown option %q", k)
		}
		if err != nil {
			return o, fmt.Errorf("configuration %q: %v", spec, err)
		}
	}
	return o, nil
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive count", name, s)
	}
	return n
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func fmtRatios(r []float64) string {
	parts := make([]string, len(r))
	for i, x := range r {
		parts[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(parts, " ")
}

// addDiff adds to h what a recorded since b (two snapshots of one
// histogram).
func addDiff(h, a, b *sched.Histogram) {
	for i := range h.Counts {
		h.Counts[i] += a.Counts[i] - b.Counts[i]
	}
	h.Sum += a.Sum - b.Sum
}
