//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/seccomp"
)

// Each run happens in a child process of its own (this program,
// re-executed): a Go process never gives back an OS thread, so in one
// process a run's thread peak would include every thread the set-up and
// the runs before it made (writing the test file, probing the kernel,
// evicting the page cache all block in system calls). In its own process
// a run reports the threads it needs. -isolate=false runs everything in
// one process, as -trace does (the tracer is in memory).
const runEnv = "TESTBENCH_RUN"

// childRun is what a child needs to run one job.
type childRun struct {
	Job      Job
	Dir      string
	Path     string
	Size     int64
	UserFile bool
	Direct   bool
	Busy     string
	Seccomp  seccomp.Set // refused before the run (-seccomp)
}

// childResult is what it hands back on stdout.
type childResult struct {
	Result Result
	Hist   *bench.Histogram
}

// maybeRunChild runs the job a parent asked for, prints its result and
// exits; in a process that is not such a child it returns at once.
func maybeRunChild() {
	spec := os.Getenv(runEnv)
	if spec == "" {
		return
	}
	var c childRun
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		fmt.Fprintln(os.Stderr, "testbench child:", err)
		os.Exit(2)
	}
	// The child takes no signals: os/signal would start a locked thread
	// and the runtime's template thread, two of the threads this run
	// counts. Ctrl-C reaches the whole process group; the parent handles
	// it and cancels the child by closing its stdin, and the child then
	// stops the run, removes its files and reports the canceled result.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	// Before anything starts diskio's scheduler, as in a container.
	if c.Seccomp != 0 {
		if err := seccomp.Install(c.Seccomp); err != nil {
			fmt.Fprintln(os.Stderr, "testbench child: -seccomp:", err)
			os.Exit(2)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	go cancelAtEOF(0, stop) // the parent's pipe is stdin
	fl := &files{}
	e := &env{dir: c.Dir, path: c.Path, size: c.Size, userFile: c.UserFile, direct: c.Direct, fl: fl, prepared: true, busy: c.Busy}
	r, h := e.run(ctx, c.Job)
	fl.removeAll()
	stop()
	if err := json.NewEncoder(os.Stdout).Encode(childResult{Result: r, Hist: h}); err != nil {
		fmt.Fprintln(os.Stderr, "testbench child:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// cancelAtEOF calls cancel when the parent closes the pipe on fd (or
// dies). It waits in the runtime's poller, not in a read that would hold
// an OS thread for the whole run.
func cancelAtEOF(fd uintptr, cancel func()) {
	defer cancel()
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		fmt.Fprintln(os.Stderr, "testbench child: stdin:", err)
		return
	}
	f := os.NewFile(fd, "parent pipe")
	defer f.Close()
	var b [1]byte
	for {
		if _, err := f.Read(b[:]); err != nil {
			return
		}
	}
}

// runIsolated runs j in a child process and returns what it measured.
func (e *env) runIsolated(ctx context.Context, j Job) (Result, *bench.Histogram) {
	fail := func(err error) (Result, *bench.Histogram) {
		r := e.result(j)
		r.Error = err.Error()
		return r, new(bench.Histogram)
	}
	spec, err := json.Marshal(childRun{Job: j, Dir: e.dir, Path: e.path, Size: e.size, UserFile: e.userFile, Direct: e.direct, Busy: e.busy, Seccomp: e.seccomp})
	if err != nil {
		return fail(err)
	}
	if err := e.prepare(j); err != nil {
		return fail(err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), runEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	// Canceled: close the child's stdin; it stops and cleans up.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fail(err)
	}
	cmd.Cancel = stdin.Close
	cmd.WaitDelay = 30 * time.Second
	done := e.prog.start(j.Group+": "+j.label(), j.Duration)
	out, err := cmd.Output()
	done()
	var cr childResult
	if derr := json.Unmarshal(out, &cr); derr != nil {
		if err == nil {
			err = derr
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fail(fmt.Errorf("run in a child process: %w", err))
	}
	if cr.Hist == nil {
		cr.Hist = new(bench.Histogram)
	}
	return cr.Result, cr.Hist
}
