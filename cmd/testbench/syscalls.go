//go:build linux

package main

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/diskio-go/diskio/sched"
)

// syscallCounter is a sched.Tracer that counts the scheduler's system
// calls and sums the time spent submitting: io_uring_enter calls that did
// not wait, io_submit, and the inline pread/pwrite of the blocking backend
// and the idle fast path. That is the 2017 paper's measure of "submit time
// per request size": on buffered files io_submit does the I/O itself, so
// its time grows with the request. Calls that slept waiting for
// completions are counted but not timed as submission.
//
// It chains to next (the -trace tracer), so both see every event.
type syscallCounter struct {
	calls    atomic.Int64
	submitNs atomic.Int64
	next     sched.Tracer
}

func (c *syscallCounter) SyscallDone(ev sched.SyscallEvent) {
	c.calls.Add(1)
	switch ev.Call {
	case sched.SysURingEnter:
		if !ev.Wait {
			c.submitNs.Add(ev.End - ev.Start)
		}
	case sched.SysIOSubmit, sched.SysPread, sched.SysPwrite:
		c.submitNs.Add(ev.End - ev.Start)
	}
	if c.next != nil {
		c.next.SyscallDone(ev)
	}
}

func (c *syscallCounter) RequestDone(ev sched.RequestEvent) {
	if c.next != nil {
		c.next.RequestDone(ev)
	}
}

// procIO is the field key of this process's /proc/self/io (syscr, syscw,
// read_bytes...), or 0 if it cannot be read.
func procIO(key string) int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
