//go:build linux

package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Busy work beside the I/O (-busy): a service's CPUs are rarely idle, and
// a scheduler that is fast only on an idle CPU is fast in the lab. With
// "inproc" GOMAXPROCS goroutines of the measured process hash 64 KiB
// buffers with SHA-256 for the whole run, competing with its I/O for the
// Go runtime's Ps; with "procs" as many processes beside it do the same,
// competing for the CPUs only. The row reports the busy work's own rate
// (hashes per second), so that I/O won by taking the program's CPU shows.
const busyEnv = "TESTBENCH_BUSY"

// busyKinds are -busy's values.
var busyKinds = []string{"inproc", "procs"}

// busyBlock is what one hash covers.
const busyBlock = 64 << 10

// startBusy starts busy work of kind ("" starts none) and returns the
// function that stops it and reports its hashes per second.
func startBusy(kind string) (stop func() float64, err error) {
	start := time.Now()
	switch kind {
	case "":
		return func() float64 { return 0 }, nil
	case "inproc":
		var done atomic.Bool
		var hashes atomic.Int64
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				hashes.Add(hashUntil(&done))
			}()
		}
		return func() float64 {
			done.Store(true)
			wg.Wait()
			return float64(hashes.Load()) / time.Since(start).Seconds()
		}, nil
	case "procs":
		return startBusyProcs(runtime.GOMAXPROCS(0))
	}
	return nil, fmt.Errorf("-busy %q: want one of %s", kind, strings.Join(busyKinds, ", "))
}

// hashUntil hashes until done is set and returns how many hashes it made.
func hashUntil(done *atomic.Bool) int64 {
	b := make([]byte, busyBlock)
	var n int64
	for !done.Load() {
		sum := sha256.Sum256(b)
		b[0] = sum[0]
		n++
	}
	return n
}

// startBusyProcs starts n processes (this program, re-executed) that hash
// on one goroutine each until their stdin closes, then print their count.
func startBusyProcs(n int) (stop func() float64, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	type proc struct {
		cmd   *exec.Cmd
		stdin io.Closer
		out   io.Reader
	}
	var ps []proc
	kill := func() {
		for _, p := range ps {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	}
	start := time.Now()
	for range n {
		cmd := exec.Command(exe)
		cmd.Env = append(busyEnviron(), busyEnv+"=1", "GOMAXPROCS=1")
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			kill()
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			kill()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			kill()
			return nil, err
		}
		ps = append(ps, proc{cmd, in, out})
	}
	return func() float64 {
		var total int64
		for _, p := range ps {
			p.stdin.Close()
			line, _ := bufio.NewReader(p.out).ReadString('\n')
			v, _ := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
			total += v
			p.cmd.Wait()
		}
		return float64(total) / time.Since(start).Seconds()
	}, nil
}

// busyEnviron is this process's environment without what would make a
// re-executed binary a measurement's child (runEnv) rather than a busy
// process: a busy process that ran a measurement would start busy
// processes of its own.
func busyEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, runEnv+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// maybeRunBusy is a busy process's whole life: hash until stdin closes,
// print the count, exit. In any other process it returns at once.
func maybeRunBusy() {
	if os.Getenv(busyEnv) == "" {
		return
	}
	var done atomic.Bool
	go func() {
		io.Copy(io.Discard, os.Stdin)
		done.Store(true)
	}()
	fmt.Println(hashUntil(&done))
	os.Exit(0)
}
