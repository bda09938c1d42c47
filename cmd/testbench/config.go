//go:build linux

package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/diskio-go/diskio/internal/seccomp"
)

// config is the parsed command line.
type config struct {
	preset     string
	info       bool
	dir        string
	file       string
	size       int64
	duration   time.Duration
	durSet     bool          // -duration given: presets use it instead of their own
	bsSet      bool          // -bs given: the wal preset's record sizes
	gsSet      bool          // -goroutines given: the slowdisk preset's counts
	beSet      bool          // -backends given: the overhead preset's rows
	rounds     int           // each row's measured time is split over this many alternating rounds
	roundsSet  bool          // -rounds given: the dropin preset's default (3) does not apply
	workloads  []string      // dropin: the rows to run (-workloads)
	devices    []string      // overhead: the devices to measure on (-devices)
	cpuProfile string        // -cpuprofile: a CPU profile of this process (with -isolate=false, of the runs)
	scale      float64       // dropin: multiplies the counts and sizes of the untimed workloads
	warmup     time.Duration // unmeasured run before the first round
	custom     bool          // workload flags given without -preset: run the flag matrix
	gs         []int
	backends   []string
	bss        []int
	rws        []string
	mix        int
	direct     bool
	fsync      string
	fallocate  bool
	fixed      bool
	entries    int
	readAhead  int
	bufSize    int
	noInline   bool
	spin       time.Duration
	trace      string
	isolate    bool        // each run in a child process of its own
	busy       string      // -busy: busy work beside each run (busy.go)
	seccomp    seccomp.Set // -seccomp: what the processes that measure refuse
	json       bool
	plot       string
	fio        bool
	progress   bool
}

var (
	presetNames  = []string{"default", "paper", "glommio", "glommio-scan", "glommio-random", "uring-write", "latency-model", "fsync", "wal"}
	backendNames = []string{"os.File", "uring", "aio", "blocking"}
	rwNames      = []string{"randread", "randwrite", "read", "write", "mixed"}
	fsyncNames   = []string{"none", "each", "end", "dsync", "group"}
)

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("testbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: testbench [flags]\n\nWith no flags: os.File vs diskio on io_uring and AIO (random reads, a scan, a durable write).\nPresets (-preset): %s.\n\n", strings.Join(presetNames, ", "))
		fs.PrintDefaults()
	}
	var size, bs, bufSize, gs, backends, rws, workloads, devices, refuse string
	fs.StringVar(&c.preset, "preset", "", "run a preset: "+strings.Join(presetNames, ", "))
	fs.BoolVar(&c.info, "info", false, "only report what the kernel and the directory support")
	fs.StringVar(&c.dir, "dir", ".", "directory for the temporary test files")
	fs.StringVar(&c.file, "file", "", "read from this existing file of real data (never written or removed) instead of a temporary one")
	fs.StringVar(&size, "size", "1G", "test file size (K, M, G suffixes)")
	fs.DurationVar(&c.duration, "duration", 4*time.Second, "measured time of each row, split evenly over the rounds (presets have their own unless this is given)")
	fs.IntVar(&c.rounds, "rounds", 6, "alternating rounds: every row runs once per round, the rows that are compared in a rotated order each round; a row reports its median over the rounds with a 95% interval, a ratio is marked ~ where the rounds do not show a difference (Mann-Whitney U, p >= 0.05); 6 is the fewest that give a 95% interval")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured run of the first row before the rounds start (the disk may still be writing the test file back)")
	fs.StringVar(&gs, "goroutines", "1,128", "goroutine counts (comma-separated)")
	fs.StringVar(&backends, "backends", "uring,aio,os.File", "backends: "+strings.Join(backendNames, ", ")+" (os.File last keeps the others' thread counts clean: threads never exit)")
	fs.StringVar(&backends, "schedulers", "uring,aio,os.File", "same as -backends")
	fs.StringVar(&bs, "bs", "4k", "block sizes (comma-separated, K/M suffixes)")
	fs.StringVar(&rws, "rw", "randread", "workloads: "+strings.Join(rwNames, ", ")+" (comma-separated)")
	fs.IntVar(&c.mix, "mix", 70, "percentage of reads in -rw mixed")
	fs.BoolVar(&c.direct, "direct", true, "O_DIRECT (false: buffered, each run starting from a cold page cache)")
	fs.StringVar(&c.fsync, "fsync", "none", "durability of writes: none, each (fdatasync after every write), end (fsync once at the end, timed), dsync (open with O_DSYNC), group (group commit: concurrent writers share fdatasyncs)")
	fs.BoolVar(&c.fallocate, "fallocate", false, "preallocate sequentially written files")
	fs.BoolVar(&c.fixed, "fixed", true, "diskio: the callers' buffers in the registered arena (READ_FIXED/WRITE_FIXED); without it they are ordinary memory, as a program's are (files are registered either way, as by default)")
	fs.IntVar(&c.entries, "entries", 0, "diskio: requests in flight in the kernel, which is also the largest batch one submission carries (0: the scheduler's default, 1024 on io_uring and 256 on AIO)")
	fs.IntVar(&c.readAhead, "readahead", 8, "diskio streams (-rw read/write): buffers kept in flight")
	fs.StringVar(&bufSize, "buffer", "512k", "diskio streams (-rw read/write): bytes per buffer")
	fs.DurationVar(&c.spin, "spin", 0, "diskio: how long the scheduler loop polls for completions and requests before it sleeps in the kernel (0: the default, 20µs; negative: never spin); longer spins trade CPU for latency (Glommio's storage example spins 10ms)")
	fs.BoolVar(&c.noInline, "noinline", false, "diskio: send even a lone request through the scheduler loop (no idle fast path)")
	fs.StringVar(&c.trace, "trace", "", "write the diskio scheduler's trace to files starting with this prefix (.wait.pb.gz, .syscalls.pb.gz, .trace.json, .jsonl, .txt)")
	fs.StringVar(&c.busy, "busy", "", "busy work during every run, reported as its hashes/s: inproc (GOMAXPROCS goroutines of the measured process hash), procs (as many processes beside it do)")
	fs.BoolVar(&c.isolate, "isolate", true, "run each measurement in a child process of its own, so that its OS thread count is its own (off with -trace)")
	fs.BoolVar(&c.json, "json", false, "print the results as JSON (see Report in result.go) instead of the table")
	fs.StringVar(&c.plot, "plot", "", "draw the results to PREFIX-throughput, -tail (latency exceedance, log-log), -scaling (IOPS, p99 and OS threads against goroutines, when there are several counts) and -model (latency-model), each .svg and .png")
	fs.BoolVar(&c.fio, "fio", false, "also run the equivalent fio job on the same file (fio must be installed)")
	fs.StringVar(&workloads, "workloads", "", "-preset dropin: run only these rows (comma-separated; a name selects all its rows, as cold-read, or one, as cold-read-16; -workloads list prints them)")
	fs.Float64Var(&c.scale, "scale", 1, "-preset dropin: multiply the work of the rows that are not timed (at 1: a 256 MiB bufio file, 200,000 Writes, 2,000 appends, 4,096 group-commit writes, 50,000 overwrites, 2,000 small files, a 512 MiB copy)")
	fs.StringVar(&devices, "devices", "", "-preset overhead: the devices, in order (shm: a file on tmpfs; loop: ext4 on a loop device with direct I/O over tmpfs; zram: ext4 on zram; disk: the -dir file); default shm,loop,disk")
	fs.StringVar(&refuse, "seccomp", "", "-preset dropin: refuse io_uring (uring), or io_uring and Linux AIO (uring,aio), with EPERM in the processes that measure, by a seccomp filter as a container's profile does (Docker's default refuses io_uring): the diskio rows run on the scheduler's fallback")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) of the testbench process to this file; with -isolate=false it holds the runs")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags only; -h lists them)", fs.Arg(0))
	}
	workloadFlags := map[string]bool{"rw": true, "bs": true, "goroutines": true, "mix": true, "direct": true, "fsync": true, "fallocate": true, "readahead": true, "buffer": true}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "duration" {
			c.durSet = true
		}
		if f.Name == "bs" {
			c.bsSet = true
		}
		if f.Name == "rounds" {
			c.roundsSet = true
		}
		c.gsSet = c.gsSet || f.Name == "goroutines"
		c.beSet = c.beSet || f.Name == "backends" || f.Name == "schedulers"
		if workloadFlags[f.Name] {
			c.custom = true
		}
	})
	if c.preset == "" {
		c.preset = "default"
	} else {
		c.custom = false
	}
	if !slices.Contains(presetNames, c.preset) {
		return nil, fmt.Errorf("unknown -preset %q (want one of %s)", c.preset, strings.Join(presetNames, ", "))
	}
	var err error
	c.workloads = splitList(workloads)
	if c.devices, err = oneOf("-devices", devices, []string{"shm", "loop", "zram", "disk"}); err != nil {
		return nil, err
	}
	if len(c.devices) > 0 && c.preset != "overhead" {
		return nil, fmt.Errorf("-devices is for -preset overhead")
	}
	if c.busy != "" && !slices.Contains(busyKinds, c.busy) {
		return nil, fmt.Errorf("-busy %q: want one of %s", c.busy, strings.Join(busyKinds, ", "))
	}
	if (len(c.workloads) > 0 || c.scale != 1) && c.preset != "dropin" {
		return nil, fmt.Errorf("-workloads and -scale are for -preset dropin")
	}
	if c.seccomp, err = seccomp.Parse(refuse); err != nil {
		return nil, fmt.Errorf("bad -seccomp %q: %w", refuse, err)
	}
	if c.seccomp != 0 {
		if c.preset != "dropin" {
			return nil, fmt.Errorf("-seccomp is for -preset dropin")
		}
		if _, err := seccomp.Program(c.seccomp); err != nil {
			return nil, err
		}
	}
	if !(c.scale > 0 && c.scale <= 1000) {
		return nil, fmt.Errorf("bad -scale %v: want a factor in (0, 1000]", c.scale)
	}
	n, err := parseSize(size)
	if c.size = int64(n); err != nil || c.size < 1<<20 {
		return nil, fmt.Errorf("bad -size %q: want at least 1M, like 512M or 2G", size)
	}
	if c.duration <= 0 {
		return nil, fmt.Errorf("bad -duration %v: must be positive", c.duration)
	}
	if c.rounds < 1 || c.rounds > 1000 {
		return nil, fmt.Errorf("bad -rounds %d: want 1..1000 (6 or more for 95%% intervals)", c.rounds)
	}
	if c.warmup < 0 {
		return nil, fmt.Errorf("bad -warmup %v: must not be negative", c.warmup)
	}
	if c.bufSize, err = parseSize(bufSize); err != nil || c.bufSize <= 0 {
		return nil, fmt.Errorf("bad -buffer %q: want a size like 512k", bufSize)
	}
	if c.readAhead <= 0 || c.entries < 0 {
		return nil, fmt.Errorf("-readahead must be positive and -entries not negative")
	}
	if c.mix < 0 || c.mix > 100 {
		return nil, fmt.Errorf("bad -mix %d: a percentage of reads, 0..100", c.mix)
	}
	for _, s := range splitList(gs) {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad -goroutines %q: want positive counts like 1,128", gs)
		}
		c.gs = append(c.gs, n)
	}
	for _, s := range splitList(bs) {
		n, err := parseSize(s)
		if err != nil || n <= 0 || n > 64<<20 {
			return nil, fmt.Errorf("bad -bs %q: want sizes like 4k,512k (at most 64M)", bs)
		}
		c.bss = append(c.bss, n)
	}
	if c.backends, err = oneOf("-backends", backends, backendNames); err != nil {
		return nil, err
	}
	if c.rws, err = oneOf("-rw", rws, rwNames); err != nil {
		return nil, err
	}
	if _, err := oneOf("-fsync", c.fsync, fsyncNames); err != nil {
		return nil, err
	}
	if len(c.gs) == 0 || len(c.bss) == 0 || len(c.backends) == 0 || len(c.rws) == 0 {
		return nil, fmt.Errorf("empty list in -goroutines, -bs, -backends or -rw")
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// oneOf splits a comma-separated list and checks every item against valid.
func oneOf(name, list string, valid []string) ([]string, error) {
	items := splitList(list)
	for _, it := range items {
		if !slices.Contains(valid, it) {
			return nil, fmt.Errorf("unknown %s value %q (want %s)", name, it, strings.Join(valid, ", "))
		}
	}
	return items, nil
}

// parseSize reads 4096, 4k, 512K, 1M, 2G (binary multiples).
func parseSize(s string) (int, error) {
	s = strings.TrimSpace(s)
	mult := 1
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:len(s)-1]
		} else {
			s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "b")
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %s out of range", s)
	}
	return n * mult, nil
}

// sizeName writes a byte count the way people say it: 4 KiB, 1 MiB, 1000 B.
func sizeName(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
