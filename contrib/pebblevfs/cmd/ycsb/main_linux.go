//go:build linux

// Command ycsb runs YCSB workloads A to F on Pebble twice, once on
// Pebble's vfs.Default and once on diskio (contrib/pebblevfs), and prints
// ops/s, p50/p99 latency, CPU per operation and peak OS threads side by
// side. Each (file system, workload) phase runs in its own child process,
// so its CPU time and thread count are its own; phases alternate between
// the two file systems.
//
//	go run ./cmd/ycsb -records 1000000 -duration 15s
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/contrib/pebblevfs"
)

type config struct {
	dir         string
	records     uint64
	valueSize   int
	duration    time.Duration
	concurrency int
	cache       int64
	diskioCache int64
	workloads   string
	fss         string
	sync        bool
	evict       bool
	backend     string
	tracer      string
	cpuprofile  string
	exectrace   string
	keep        bool
	load        bool
	mode        string
	rounds      int
	child       string
	lock        string
}

func main() {
	var c config
	var cacheMiB, diskioCacheMiB int64
	flag.StringVar(&c.dir, "dir", os.TempDir(), "directory for the two databases (must support O_DIRECT for diskio to use it)")
	flag.Uint64Var(&c.records, "records", 1_000_000, "records loaded before the workloads")
	flag.IntVar(&c.valueSize, "value", 1000, "value size in bytes (YCSB: 10 fields of 100 bytes)")
	flag.DurationVar(&c.duration, "duration", 15*time.Second, "length of each workload phase")
	flag.IntVar(&c.concurrency, "concurrency", 64, "goroutines issuing operations")
	flag.Int64Var(&cacheMiB, "cache", 64, "Pebble block cache, MiB")
	flag.Int64Var(&diskioCacheMiB, "diskio-cache", -1, "block cache for the diskio database in direct mode, MiB (default: -cache); buffered mode keeps the page cache and gets -cache")
	flag.StringVar(&c.workloads, "workloads", "A,B,C,D,E,F", "workloads to run, in order (A-F; U is A with uniform keys)")
	flag.StringVar(&c.fss, "fs", "default,diskio", "file systems, alternated within each workload: default, mem (vfs.NewMem: no disk at all, the floor of threads and CPU; each phase loads its own database first, unmeasured), or diskio with any of the suffixes -direct, -buffered (else -mode), -dsync (WAL files O_DSYNC: FS.WALDSync), -raN (N reads in flight for sequential reads: FS.ReadAhead), -freshN (FS.FreshBytes in MiB, taken from the direct block cache; fresh0 keeps nothing), -waldirect (WAL files O_DIRECT: FS.WALDirect), -wqN (io_uring workers capped at N: sched.Options.IOWQMaxWorkers), -apart (direct: the fresh cache beside a block cache smaller by FreshBytes, instead of reserving its bytes in the block cache: FS.Cache), -noclasses (every file unclassified: FS.NoClasses), -noinline (the scheduler makes no request on its caller's thread: sched.Options.NoInline), e.g. diskio-direct-ra1")
	flag.StringVar(&c.mode, "mode", "direct", "pebblevfs mode of the diskio file system: direct (Pebble's block cache is the cache) or buffered (the page cache kept)")
	flag.IntVar(&c.rounds, "rounds", 1, "times to repeat the load and the workloads (loading afresh each round)")
	flag.BoolVar(&c.sync, "sync", true, "commit updates and inserts with pebble.Sync (as Pebble's own ycsb does)")
	flag.BoolVar(&c.evict, "evict", true, "drop the database's files from the page cache before each vfs.Default phase (posix_fadvise DONTNEED), so both start cold")
	flag.StringVar(&c.backend, "backend", "", "diskio scheduler backend: uring, aio, blocking (default: automatic)")
	flag.StringVar(&c.tracer, "tracer", "", "sched.Tracer for the diskio phases: summary (per-request timing), or another registered one as NAME=ARG")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "directory to write a CPU profile of each phase to")
	flag.StringVar(&c.exectrace, "exectrace", "", "directory to write a Go execution trace (runtime/trace) of each phase to, from the database's opening: which system calls held threads, when the runtime started them")
	flag.BoolVar(&c.keep, "keep", false, "keep the databases after the run")
	flag.BoolVar(&c.load, "load", true, "load the databases first (false: reuse the ones a -keep run left in -dir)")
	flag.StringVar(&c.child, "child", "", "internal: run one phase, FS/WORKLOAD")
	flag.StringVar(&c.lock, "lock", "", "file to hold an exclusive flock(2) on while the phases of one load or workload run (all file systems of it, back to back), released between them, so a shared machine's other measurements wait")
	flag.Parse()
	c.cache = cacheMiB << 20
	c.diskioCache = c.cache
	if diskioCacheMiB >= 0 {
		c.diskioCache = diskioCacheMiB << 20
	}
	if c.child != "" {
		if err := runChild(c); err != nil {
			fmt.Fprintln(os.Stderr, "ycsb:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "ycsb:", err)
		os.Exit(1)
	}
}

// run loads both databases, then runs each workload on each file system,
// every phase in a child process, and prints the table.
func run(c config) error {
	var ws []workload
	if c.workloads != "" {
		var err error
		if ws, err = parseWorkloads(c.workloads); err != nil {
			return err
		}
	}
	fss := strings.Split(c.fss, ",")
	for _, fs := range fss {
		if _, err := parseFS(fs, pebblevfs.Direct); err != nil {
			return err
		}
	}
	if _, err := pebblevfs.ParseMode(c.mode); err != nil {
		return err
	}
	for _, d := range []string{c.cpuprofile, c.exectrace} {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	root := filepath.Join(c.dir, "ycsb-pebble")
	if !c.load {
		for _, fs := range fss {
			if fs == "mem" {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, fs)); err != nil {
				return fmt.Errorf("-load=false needs the databases of a -keep run: %w", err)
			}
		}
	}
	if !c.keep {
		defer os.RemoveAll(root)
	}
	fmt.Printf("records %d × %d B values, %d goroutines, %s per phase, block cache %d MiB (diskio direct %d MiB), mode %s, sync %v, evict %v\n\n",
		c.records, c.valueSize, c.concurrency, c.duration, c.cache>>20, c.diskioCache>>20, c.mode, c.sync, c.evict)
	var results []result
	round := 0
	phase := func(fs, w string) error {
		r, err := child(fs + "/" + w)
		if err != nil {
			return fmt.Errorf("%s/%s: %w", fs, w, err)
		}
		r.Round = round
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "%-8s %-6s %10.0f ops/s  p50 %8.1f µs  p99 %9.1f µs  %6.1f CPU µs/op  %s threads\n",
			r.Workload, r.FS, r.OpsPerSec, r.P50, r.P99, r.CPUPerOp, threadsCell(r))
		fmt.Fprintf(os.Stderr, "           %d compactions (%d read-triggered) wrote %d MiB; block cache %d hits, %d misses\n",
			r.Compactions, r.ReadCompactions, r.CompactedBytes>>20, r.CacheHits, r.CacheMiss)
		for _, o := range r.ByOp {
			fmt.Fprintf(os.Stderr, "           %-7s %9d ops  mean %9.1f µs  p50 %8.1f µs  p99 %9.1f µs\n", o.Op, o.Count, o.Mean, o.P50, o.P99)
		}
		return nil
	}
	for rd := range c.rounds {
		if c.load {
			round++
			order := fss
			if rd%2 == 1 { // alternate who goes first
				order = rotate(fss)
			}
			if err := locked(c.lock, func() error {
				for _, fs := range order {
					if err := phase(fs, "load"); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
		for i, w := range ws {
			round++
			order := fss
			if (rd+i)%2 == 1 {
				order = rotate(fss)
			}
			if err := locked(c.lock, func() error {
				for _, fs := range order {
					if err := phase(fs, w.name); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
	}
	printTable(results)
	printSummary(results)
	return nil
}

// locked runs f holding an exclusive flock(2) on path, or without a lock
// when path is empty.
func locked(path string, f func() error) error {
	if path == "" {
		return f()
	}
	l, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	defer l.Close()
	for {
		err = unix.Flock(int(l.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return f() // Close releases the lock
}

// rotate returns fss with its last element first.
// fsConfig is a diskio file system of the -fs list.
type fsConfig struct {
	mode      pebblevfs.Mode
	dsync     bool
	readAhead int
	fresh     int64 // FS.FreshBytes: 0 default, <0 none
	workers   int   // sched.Options.IOWQMaxWorkers: 0 default
	apart     bool  // the fresh cache beside the block cache, not in it
	walDirect bool
	noClasses bool // pebblevfs.FS.NoClasses: every file unclassified
	noInline  bool // sched.Options.NoInline: no request on its caller's thread
}

// parseFS parses "diskio[-direct|-buffered][-dsync][-raN][-freshN][-waldirect][-wqN][-apart][-noclasses][-noinline]";
// mode is -mode's.
func parseFS(name string, mode pebblevfs.Mode) (fsConfig, error) {
	parts := strings.Split(name, "-")
	c := fsConfig{mode: mode}
	if name == "default" || name == "mem" {
		return c, nil
	}
	if parts[0] != "diskio" {
		return c, fmt.Errorf("unknown -fs %q: default, mem, or diskio with suffixes -direct, -buffered, -dsync, -raN, -freshN, -waldirect, -wqN, -apart, -noclasses, -noinline", name)
	}
	for _, p := range parts[1:] {
		switch {
		case p == "direct":
			c.mode = pebblevfs.Direct
		case p == "buffered":
			c.mode = pebblevfs.PageCache
		case p == "dsync":
			c.dsync = true
		case strings.HasPrefix(p, "wq"):
			n, err := strconv.Atoi(p[2:])
			if err != nil || n < 1 {
				return c, fmt.Errorf("-fs %q: worker cap %q is not a count", name, p)
			}
			c.workers = n
		case p == "apart":
			c.apart = true
		case p == "waldirect":
			c.walDirect = true
		case p == "noclasses":
			c.noClasses = true
		case p == "noinline":
			c.noInline = true
		case strings.HasPrefix(p, "fresh"):
			n, err := strconv.ParseInt(p[5:], 10, 64)
			if err != nil || n < 0 {
				return c, fmt.Errorf("-fs %q: fresh cache %q is not a size in MiB", name, p)
			}
			c.fresh = n << 20
			if n == 0 {
				c.fresh = -1
			}
		case strings.HasPrefix(p, "ra"):
			n, err := strconv.Atoi(p[2:])
			if err != nil || n < 1 {
				return c, fmt.Errorf("-fs %q: read-ahead %q is not a count", name, p)
			}
			c.readAhead = n
		default:
			return c, fmt.Errorf("-fs %q: unknown suffix %q (have direct, buffered, dsync, raN, freshN, waldirect, wqN, apart, noclasses, noinline)", name, p)
		}
	}
	return c, nil
}

func rotate(fss []string) []string {
	return append([]string{fss[len(fss)-1]}, fss[:len(fss)-1]...)
}

// child runs one phase in a new process with the same flags.
func child(phase string) (result, error) {
	exe, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	args := append([]string{"-child", phase}, os.Args[1:]...)
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	var r result
	found := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return r, err
			}
			found = true
		}
	}
	if err := cmd.Wait(); err != nil {
		return r, err
	}
	if !found {
		return r, fmt.Errorf("child printed no result")
	}
	return r, nil
}

// threadsCell is a phase's peak OS threads, with io_uring's workers
// among them when there were any.
func threadsCell(r result) string {
	if r.Workers > 0 {
		return fmt.Sprintf("%d (%d iou-wrk)", r.Threads, r.Workers)
	}
	return strconv.Itoa(r.Threads)
}

func printTable(rs []result) {
	base := map[int]float64{} // the vfs.Default result of each round
	for _, r := range rs {
		if r.FS == "default" {
			base[r.Round] = r.OpsPerSec
		}
	}
	fmt.Println("load: ops are records, latencies are of 1,000-record batches (NoSync); the others: one YCSB operation each.")
	fmt.Println()
	fmt.Println("| workload | fs | ops/s | vs default | p50 µs | p99 µs | CPU µs/op | peak OS threads | disk read MiB | disk write MiB | memory MiB (page cache) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		ratio := "-"
		if b := base[r.Round]; b > 0 {
			ratio = fmt.Sprintf("%.2fx", r.OpsPerSec/b)
		}
		fmt.Printf("| %s | %s | %.0f | %s | %.1f | %.1f | %.1f | %s | %.0f | %.0f | %d (%d) |\n",
			r.Workload, r.FS, r.OpsPerSec, ratio, r.P50, r.P99, r.CPUPerOp, threadsCell(r),
			float64(r.ReadBytes)/(1<<20), float64(r.WriteBytes)/(1<<20), r.Memory>>20, r.PageCache>>20)
	}
}
