//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/contrib/pebblevfs"
	"github.com/diskio-go/diskio/sched"
)

// result is one phase's measurements, passed from child to parent as JSON.
type result struct {
	FS, Workload          string
	Round                 int // phases of one round are compared
	Ops                   int64
	OpsPerSec             float64
	P50, P99              float64   // µs
	CPUPerOp              float64   // µs of user+system CPU of the whole process
	Threads               int       // peak OS threads of the process
	Workers               int       // of them io_uring workers (iou-wrk), at the peak
	ReadBytes, WriteBytes int64     // storage I/O of the process (/proc/self/io)
	PageCache             int64     // bytes of the database's files in the page cache at the phase's end
	Memory                int64     // the phase's cache memory: block cache (+ fresh cache) + PageCache
	ByOp                  []opStats // latency by kind of operation (workloads only)
	Compactions           int64     // compactions Pebble ran during the phase
	ReadCompactions       int64     // of them read-triggered
	CompactedBytes        uint64    // bytes the compactions wrote
	CacheHits, CacheMiss  int64     // block cache
}

// opStats is the latency of one kind of operation in a phase.
type opStats struct {
	Op             string
	Count          int64
	Mean, P50, P99 float64 // µs
}

// runChild runs one phase: "FS/load" loads a fresh database, "FS/X" runs
// workload X on the loaded one.
func runChild(c config) error {
	fsName, wname, _ := strings.Cut(c.child, "/")
	dir := filepath.Join(c.dir, "ycsb-pebble", fsName)
	if c.exectrace != "" {
		// From the start: threads the database's opening starts count
		// in the phase's peak too.
		f, err := os.Create(filepath.Join(c.exectrace, fsName+"-"+wname+".trace"))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return err
		}
		defer trace.Stop()
	}
	cacheSize := c.cache
	opts := &pebble.Options{Logger: quietLogger{}, FS: vfs.Default}
	mem := fsName == "mem"
	if mem {
		opts.FS = vfs.NewMem()
	}
	var tr phaseTracer
	var dfs *pebblevfs.FS
	apart := false
	if strings.HasPrefix(fsName, "diskio") {
		cacheSize = c.diskioCache
		var err error
		if tr, err = newTracer(c.tracer); err != nil {
			return err
		}
		mode, err := pebblevfs.ParseMode(c.mode)
		if err != nil {
			return err
		}
		fc, err := parseFS(fsName, mode)
		if err != nil {
			return err
		}
		so, err := sched.OptionsFromEnv() // DISKIO_BACKEND and DISKIO_IOWQ_MAX_WORKERS, as for sched.Default
		if err != nil {
			return err
		}
		if c.backend != "" {
			so.Backend = sched.Backend(c.backend)
		}
		if fc.workers != 0 {
			so.IOWQMaxWorkers = fc.workers
		}
		so.NoInline = fc.noInline
		if tr != nil {
			so.Tracer = tr
		}
		s, err := sched.New(so)
		if err != nil {
			return err
		}
		defer s.Close()
		if fc.mode == pebblevfs.PageCache {
			cacheSize = c.cache // the page cache is kept: compare at the same block cache
		}
		fs := pebblevfs.NewMode(fc.mode, diskio.WithScheduler(s)).(*pebblevfs.FS)
		fs.WALDSync = fc.dsync
		fs.ReadAhead = fc.readAhead
		fs.FreshBytes = fc.fresh
		fs.WALDirect = fc.walDirect
		fs.NoClasses = fc.noClasses
		dfs, apart = fs, fc.apart
		if fc.mode == pebblevfs.Direct && fc.apart {
			// The fresh cache is memory the database uses: take it from
			// the block cache, so -diskio-cache is the whole.
			fresh := fc.fresh
			if fresh == 0 {
				fresh = pebblevfs.DefaultFreshBytes
			}
			cacheSize = max(cacheSize-max(fresh, 0), 8<<20)
		}
		opts.FS = fs
	}
	cache := pebble.NewCache(cacheSize)
	defer cache.Unref()
	opts.Cache = cache
	if dfs != nil && dfs.Mode == pebblevfs.Direct && !apart {
		dfs.Cache = cache // the fresh cache reserves what it holds there
	}

	switch {
	case mem: // a fresh process's memory file system is empty
	case wname == "load":
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	case c.evict:
		if err := evict(dir); err != nil {
			return err
		}
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return err
	}
	if mem && wname != "load" {
		if _, _, err := load(c, db); err != nil {
			db.Close()
			return err
		}
	}
	m := startMeasure()
	if c.cpuprofile != "" {
		f, err := os.Create(filepath.Join(c.cpuprofile, fsName+"-"+wname+".cpu.pprof"))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	var hist *hdrhistogram.Histogram
	var ops int64
	var byOp []opStats
	if wname == "load" {
		hist, ops, err = load(c, db)
	} else {
		hist, ops, byOp, err = runWorkload(c, db, workloads[wname])
	}
	if c.cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	r := m.stop(ops)
	dm := db.Metrics() // counts since this process opened the database
	r.Compactions, r.ReadCompactions = dm.Compact.Count, dm.Compact.ReadCount
	r.CompactedBytes = dm.Total().TableBytesCompacted
	r.CacheHits, r.CacheMiss = dm.BlockCache.Hits, dm.BlockCache.Misses
	if err != nil {
		db.Close()
		return err
	}
	if !mem {
		if r.PageCache, err = cached(dir); err != nil {
			db.Close()
			return err
		}
	}
	r.Memory = cacheSize + r.PageCache
	if dfs != nil && dfs.Mode == pebblevfs.Direct && apart {
		switch {
		case dfs.FreshBytes == 0:
			r.Memory += pebblevfs.DefaultFreshBytes
		case dfs.FreshBytes > 0:
			r.Memory += dfs.FreshBytes
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	r.FS, r.Workload, r.ByOp = fsName, wname, byOp
	r.P50 = float64(hist.ValueAtQuantile(50)) / 1000
	r.P99 = float64(hist.ValueAtQuantile(99)) / 1000
	if tr != nil {
		if err := tr.Finish(c.child); err != nil {
			return err
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Printf("RESULT %s\n", b)
	return nil
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(60*time.Second), 3) }

// values is random data that values are cut from: incompressible, like
// YCSB's random field contents, and cheap to produce.
var values = func() []byte {
	r := rand.New(rand.NewPCG(1, 1))
	b := make([]byte, 4<<20)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

func value(r *rand.Rand, n int) []byte {
	off := r.IntN(len(values) - n)
	return values[off : off+n]
}

// load inserts the records in batches of 1,000 (in the record order of
// insertorder=hashed: scattered keys) from all goroutines, then flushes and
// waits for compactions to finish. The ops are the records; the latencies
// are of batches.
func load(c config, db *pebble.DB) (*hdrhistogram.Histogram, int64, error) {
	const batch = 1000
	var next atomic.Uint64
	hists := make([]*hdrhistogram.Histogram, c.concurrency)
	errs := make([]error, c.concurrency)
	var wg sync.WaitGroup
	for g := range c.concurrency {
		hists[g] = newHist()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for {
				start := next.Add(batch) - batch
				if start >= c.records {
					return
				}
				t0 := time.Now()
				b := db.NewBatch()
				for i := start; i < min(start+batch, c.records); i++ {
					if err := b.Set(key(i), value(r, c.valueSize), nil); err != nil {
						errs[g] = err
						return
					}
				}
				if err := b.Commit(pebble.NoSync); err != nil {
					errs[g] = err
					return
				}
				hists[g].RecordValue(time.Since(t0).Nanoseconds())
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, 0, err
		}
	}
	if err := db.Flush(); err != nil {
		return nil, 0, err
	}
	// Pebble may keep a compaction debt it never schedules work for, so
	// the load ends once no compaction has run for a second.
	for idle := 0; idle < 10; {
		m := db.Metrics()
		if m.Compact.EstimatedDebt == 0 && m.Compact.NumInProgress == 0 {
			break
		}
		if m.Compact.NumInProgress == 0 {
			idle++
		} else {
			idle = 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	h := newHist()
	for _, x := range hists {
		h.Merge(x)
	}
	return h, int64(c.records), nil
}

// runWorkload runs w from all goroutines for the phase's duration.
func runWorkload(c config, db *pebble.DB, w workload) (*hdrhistogram.Histogram, int64, []opStats, error) {
	z := newZipfian(c.records, 0.99)
	wopt := pebble.NoSync
	if c.sync {
		wopt = pebble.Sync
	}
	ins := newInserts(c.records)
	deadline := time.Now().Add(c.duration)
	hists := make([][numOpKinds]*hdrhistogram.Histogram, c.concurrency)
	errs := make([]error, c.concurrency)
	var wg sync.WaitGroup
	for g := range c.concurrency {
		for k := range hists[g] {
			hists[g][k] = newHist()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 11))
			var err error
			for n := 0; ; n++ {
				if n%16 == 0 && time.Now().After(deadline) {
					return
				}
				t0 := time.Now()
				rec := func() uint64 {
					if w.latest {
						return z.latest(r, ins.latest())
					}
					return z.record(r, w.requestDistZipfian)
				}
				op := w.pick(r)
				switch op {
				case opRead:
					err = read(db, key(rec()))
				case opUpdate:
					err = db.Set(key(rec()), value(r, c.valueSize), wopt)
				case opRMW:
					k := key(rec())
					if err = read(db, k); err == nil {
						err = db.Set(k, value(r, c.valueSize), wopt)
					}
				case opInsert:
					n := ins.take()
					if err = db.Set(key(n), value(r, c.valueSize), wopt); err == nil {
						ins.commit(n)
					}
				case opScan:
					err = scan(db, key(z.record(r, w.requestDistZipfian)), 1+r.IntN(w.maxScan))
				}
				if err != nil {
					errs[g] = err
					return
				}
				hists[g][op].RecordValue(time.Since(t0).Nanoseconds())
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, 0, nil, err
		}
	}
	all := newHist()
	var byOp []opStats
	for k := range numOpKinds {
		h := newHist()
		for g := range hists {
			h.Merge(hists[g][k])
		}
		if h.TotalCount() == 0 {
			continue
		}
		all.Merge(h)
		byOp = append(byOp, opStats{
			Op:    k.String(),
			Count: h.TotalCount(),
			Mean:  h.Mean() / 1000,
			P50:   float64(h.ValueAtQuantile(50)) / 1000,
			P99:   float64(h.ValueAtQuantile(99)) / 1000,
		})
	}
	return all, all.TotalCount(), byOp, nil
}

func read(db *pebble.DB, k []byte) error {
	_, closer, err := db.Get(k)
	if err != nil {
		return err // every key read was loaded: ErrNotFound is a failure
	}
	return closer.Close()
}

func scan(db *pebble.DB, start []byte, n int) error {
	it, err := db.NewIter(nil)
	if err != nil {
		return err
	}
	for ok := it.SeekGE(start); ok && n > 0; ok = it.Next() {
		_ = it.Value()
		n--
	}
	return it.Close()
}

// evict drops the files of dir from the page cache.
func evict(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// cached returns how many bytes of dir's files the page cache holds
// (cachestat(2) over each file).
func cached(dir string) (int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed meanwhile (an obsolete table)
			}
			return 0, err
		}
		var cs unix.Cachestat_t
		err = unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &cs, 0)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("cachestat %s: %w", e.Name(), err)
		}
		total += int64(cs.Cache) * int64(os.Getpagesize())
	}
	return total, nil
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
	os.Exit(2)
}
