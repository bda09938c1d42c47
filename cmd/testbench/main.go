//go:build linux

// Command testbench compares disk I/O through os.File with diskio's
// scheduler (io_uring, Linux AIO, blocking) on your own disk, and
// reproduces the experiments diskio was built from.
//
//	go run ./cmd/testbench
//
// With no flags it reports what the kernel offers, writes a 1 GiB file of
// random data in the current directory (-dir), and compares os.File with
// diskio on io_uring and AIO: 4 KiB random reads at 1 and 128 goroutines,
// a sequential scan (os.File reads against diskio's StreamReader), and a
// durable write (4 KiB random O_DSYNC writes from 32 goroutines), all
// O_DIRECT as the experiments it reproduces, with os.File as programs use
// it (buffered) beside the O_DIRECT os.File baseline. It prints
// one table with the ratio of each row to os.File and removes the file
// (also on Ctrl-C). About 60 s.
//
// A shared or cloud disk changes speed by tens of percent within a minute,
// so one run per row misleads. After an unmeasured warm-up (-warmup 2s:
// the disk may still be writing the test file back), every row runs once
// in each of 6 alternating rounds (-rounds), the rows that are compared
// side by side and in an order rotated each round; a row's 4 s (-duration)
// are split over the rounds. A row reports the median of its rounds and
// "±", the interval that holds the median at 95% confidence; a ratio is the
// ratio of the medians, marked "~" where the rounds show no difference
// (Mann-Whitney U test, p >= 0.05): benchstat's statistics
// (golang.org/x/perf/benchmath). -json carries every round.
//
// Each row reports IOPS, MB/s, latency percentiles, CPU time per operation
// (the whole process, from getrusage), the peak number of OS threads
// (threads never exit in Go, so os.File runs go last), allocations and
// system calls per operation. Buffered runs start with the file evicted
// from the page cache (posix_fadvise DONTNEED).
//
// Presets reproduce the source experiments (see RESULTS.md):
//
//	-preset paper           2017 Go AIO attempt: blocking vs AIO vs io_uring, 2 goroutines,
//	                        1 KiB..1 MiB reads and writes, buffered and O_DIRECT, submit time per op
//	-preset glommio         Glommio's storage example: random, ReadMany bulk, four scans, each beside fio
//	-preset glommio-scan    Glommio's scan ladder: buffered, direct 4 KiB, read-ahead, big buffers, fixed, poll
//	-preset glommio-random  random 4 KiB reads, cached working set vs whole file, buffered vs direct
//	-preset uring-write     std / uring / uring-fixed x plain, fsync, O_DIRECT|O_DSYNC, fallocate
//	-preset latency-model   t(n) = tq + tp*n fit, read-ahead detection, recommended buffer and depth
//	-preset fsync           fdatasync per write vs none vs O_DSYNC vs group commit
//	-preset wal             log appends with Sync/Datasync: growing, preallocated, recycled files, group commit
//	-preset cache           diskio's page-cache files against os.File: hot and cold reads, a scan, io.Copy
//	-preset dropin          what changing one import does: os.File against diskio.OpenFile with no
//	                        options and with WithDirect(Direct), in the workloads programs run (hot
//	                        and cold random reads, Read and io.Copy scans, bufio and small writes,
//	                        appends with Sync, group commit, overwrites, small files, file copies),
//	                        3 rounds after a warm-up round, ratios, peak threads, a check of each row
//	                        against the targets, and the table as markdown; -workloads selects rows
//	                        (-workloads list names them), -scale multiplies the untimed ones' work
//	-preset overhead        what diskio costs per request where the device costs nothing: 4 KiB O_DIRECT
//	                        random reads, diskio (uring, aio), os.File and fio (with and without registered
//	                        buffers and file) at 1..1,024 goroutines on tmpfs, ext4 on a loop device over
//	                        tmpfs (root) and the -dir disk (-devices): IOPS, CPU µs/op, IOPS per busy core,
//	                        allocs/op, syscalls/op (perf events), threads
//	-preset slowdisk        12,000 goroutines reading 4 KiB each from a disk throttled to 200 IOPS:
//	                        os.File dies at the runtime's 10,000-thread limit, diskio finishes
//	                        (root: a loop device throttled with the cgroup v1 blkio controller)
//
// Flags in the spirit of fio select a custom matrix instead: -rw
// (randread, randwrite, read, write, mixed with -mix), -bs, -goroutines,
// -backends, -direct, -fsync (none, each, end, dsync, group), -fallocate,
// -fixed, -entries, -spin (the loop's spin before it
// sleeps; the glommio preset takes it too), -readahead and -buffer
// (streams).
// -json prints the results as a Report (result.go). -plot PREFIX draws
// them with gonum.org/v1/plot, as SVG and PNG: PREFIX-scaling (IOPS, p99
// latency and OS threads against goroutines, for a group run at several
// counts), PREFIX-tail (latency exceedance on log-log axes), and
// PREFIX-throughput. -fio adds fio's figure for the same job as the
// physical limit, one more row in each round.
// -trace PREFIX writes the tracer's files for the diskio runs.
//
// Durability: `testbench crash -n 200` kills a child appending checksummed
// records with Sync 200 times and checks every acknowledged record;
// `diskcheck` does it with acknowledgements over loopback TCP, and
// diskcheck-serve / diskcheck-client / diskcheck-verify do it across two
// machines so that a real power cut can be tested (see crash.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/diskio-go/diskio/aio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/crash"
	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/seccomp"
	"github.com/diskio-go/diskio/uring"
)

func main() {
	maybeRunBusy()     // a busy process beside a run (-busy procs) is this binary, re-executed
	crash.MaybeChild() // so is the crash mode's child
	maybeRunChild()    // and each measurement (see isolate.go)
	slowdiskChild()    // and each side of -preset slowdisk
	fl := &files{}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "\ntestbench: %v: stopping (again to quit at once)\n", sig)
		cancel()
		<-sigs
		for _, p := range fl.removeAll() {
			fmt.Fprintf(os.Stderr, "testbench: removed %s\n", p)
		}
		os.Exit(130)
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, fl)
	fl.removeAll()
	if errors.Is(err, context.Canceled) {
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testbench: %v\n", err)
		os.Exit(2)
	}
}

// run is the whole command; main adds signals and the exit code. Every
// temporary file is registered in fl, which the caller empties.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, fl *files) error {
	if len(args) > 0 && crashModes[args[0]] {
		return runCrash(ctx, args[0], args[1:], stdout, stderr)
	}
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.cpuProfile != "" {
		stop, err := startCPUProfile(c.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.preset == "slowdisk" { // a disk of its own, no test file here
		return runSlowdisk(ctx, c, args, stdout, stderr, fl)
	}
	if c.preset == "dropin" {
		if done, err := dropinFlags(c, stdout); done || err != nil {
			return err
		}
	}
	rep := &Report{Preset: c.preset, Command: "testbench " + strings.Join(args, " "), GoVersion: runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), Dir: c.dir, Rounds: c.rounds}
	if c.custom {
		rep.Preset = "custom"
	}
	rep.FSType, _ = dio.FSType(c.dir)
	info := stdout
	if c.json {
		info = stderr
	}
	kernelReport(info, c.dir)
	if c.info {
		fileReport(info, c.dir)
		return nil
	}
	var why string
	rep.Direct, why = directSupport(c.dir)
	if why != "" {
		rep.Notes = append(rep.Notes, why)
	}

	e := &env{dir: c.dir, size: c.size, direct: rep.Direct, fl: fl, prog: newProgress(stderr), busy: c.busy}
	if err := refuse(c, e, rep); err != nil {
		return err
	}
	var finishTrace func() error
	if c.trace != "" {
		if e.tracer, finishTrace, err = openTrace(c.trace); err != nil {
			return err
		}
	}
	if c.file != "" {
		st, err := os.Stat(c.file)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() || st.Size() < 1<<20 {
			return fmt.Errorf("-file %s: want a regular file of at least 1 MiB of real data", c.file)
		}
		e.path, e.size, e.userFile = c.file, st.Size(), true
		if err := checkSpace(c.dir, e.size+64<<20); err != nil { // room for write runs
			return err
		}
	} else {
		// The data file, and as much again for the files sequential
		// write runs create (one at a time), plus slack.
		if err := checkSpace(c.dir, 2*c.size+64<<20); err != nil {
			return err
		}
		e.prog.note("writing the %s test file in %s ...", sizeName(c.size), c.dir)
		if e.path, err = makeDataFile(fl, c.dir, c.size, nil); err != nil {
			return fmt.Errorf("creating the test file: %w", err)
		}
		e.prog.note("")
	}
	rep.FileSize = e.size
	if avail := memAvailable(); avail > 0 && e.size < avail {
		rep.FitsInRAM = true
		rep.Notes = append(rep.Notes, fmt.Sprintf("the %s file fits in RAM (%s available): buffered runs start cold (posix_fadvise DONTNEED) but re-read blocks can come from the page cache", sizeName(e.size), sizeName(avail>>30<<30)))
	}

	s := &suite{c: c, e: e, rep: rep}
	if c.custom {
		err = s.runAll(ctx, customJobs(c))
	} else {
		err = presets[c.preset](ctx, s)
	}
	if finishTrace != nil {
		if terr := finishTrace(); err == nil {
			err = terr
		}
	}
	if err != nil {
		return err
	}
	computeRatios(rep.Results)
	if c.plot != "" {
		if err := writePlots(c.plot, s); err != nil {
			return err
		}
	}
	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if s.print != nil {
		s.print(stdout, rep)
		return nil
	}
	printReport(stdout, rep)
	return nil
}

// refuse applies -seccomp: each isolated run's process installs the
// filter before it starts (isolate.go); runs in this process need it
// here, before any of them starts diskio's scheduler.
func refuse(c *config, e *env, rep *Report) error {
	if c.seccomp == 0 {
		return nil
	}
	rep.Seccomp = c.seccomp.String()
	rep.Notes = append(rep.Notes, fmt.Sprintf("-seccomp %s: the processes that measure refuse %s with EPERM (a seccomp filter, as a container's profile); diskio's rows run on the scheduler's fallback", c.seccomp, strings.Join(c.seccomp.Calls(), ", ")))
	if c.isolate && c.trace == "" {
		e.seccomp = c.seccomp
		return nil
	}
	return seccomp.Install(c.seccomp)
}

// startCPUProfile writes a CPU profile of this process to path until the
// returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// suite runs a preset's jobs and collects their results.
type suite struct {
	c     *config
	e     *env
	rep   *Report
	hists []*bench.Histogram // parallel to rep.Results: all rounds merged
	fit   []fitPoint         // latency-model: sizes and mean latencies
	// warmed: the unmeasured warm-up ran (once per invocation, before
	// the first round of the first runAll).
	warmed bool
	// warmRounds is the number of unmeasured rounds of every row that
	// runAll runs before the measured ones (a preset's choice; 0: the
	// one warm-up run of -warmup).
	warmRounds int
	// print, if set, replaces printReport for the preset's table.
	print func(w io.Writer, rep *Report)
}

func (s *suite) note(msg string) {
	for _, n := range s.rep.Notes {
		if n == msg {
			return
		}
	}
	s.rep.Notes = append(s.rep.Notes, msg)
}

func kernelReport(w io.Writer, dir string) {
	fmt.Fprintf(w, "Go %s, GOMAXPROCS %d\n", runtime.Version(), runtime.GOMAXPROCS(0))
	if info, err := uring.Detect(); err != nil {
		fmt.Fprintf(w, "io_uring: unavailable: %v\n", err)
	} else {
		fmt.Fprint(w, info)
		workersReport(w)
	}
	if ctx, err := aio.Setup(1); err != nil {
		fmt.Fprintf(w, "Linux AIO: unavailable: %v\n", err)
	} else {
		fmt.Fprintf(w, "Linux AIO: available (completions reaped from the user ring: %v)\n", ctx.UserRing())
		ctx.Destroy()
	}
	if a, err := dio.ProbeAlignment(dir); err != nil {
		fmt.Fprintf(w, "O_DIRECT in %s: %v\n", dir, err)
	} else {
		fs, _ := dio.FSType(dir)
		fmt.Fprintf(w, "O_DIRECT in %s (%s): %s\n", dir, fs, a)
	}
	fmt.Fprintln(w)
}
