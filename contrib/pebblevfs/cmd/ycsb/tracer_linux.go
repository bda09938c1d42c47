//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/diskio-go/diskio/sched"
)

// phaseTracer is a sched.Tracer for the diskio phases of a run, with a
// report at the end of each phase.
type phaseTracer interface {
	sched.Tracer
	// Finish writes the report of the phase (for example "diskio/C").
	Finish(phase string) error
}

// tracers are the choices of -tracer NAME[=ARG]. A tracer from another
// package (such as an I/O-wait profile writer) is added with one entry
// here, in its own file's init.
var tracers = map[string]func(arg string) (phaseTracer, error){
	"summary": func(arg string) (phaseTracer, error) { return &summary{out: os.Stderr}, nil },
}

func newTracer(spec string) (phaseTracer, error) {
	if spec == "" {
		return nil, nil
	}
	name, arg, _ := strings.Cut(spec, "=")
	mk, ok := tracers[name]
	if !ok {
		var names []string
		for n := range tracers {
			names = append(names, n)
		}
		return nil, fmt.Errorf("unknown tracer %q (have %s)", name, strings.Join(names, ", "))
	}
	return mk(arg)
}

// summary adds up where each request's time went, by kind: waiting to be
// submitted, in the kernel, and from completion until its goroutine ran;
// and the system calls the scheduler made.
type summary struct {
	out io.Writer
	ops [8]opSum
	sys [16]sysSum
}

type opSum struct {
	n, inline, bytes             atomic.Int64
	queue, device, resume, total atomic.Int64 // nanoseconds
}

type sysSum struct {
	n, waits, submitted, ns atomic.Int64
}

func (s *summary) SyscallDone(ev sched.SyscallEvent) {
	if int(ev.Call) >= len(s.sys) {
		return
	}
	c := &s.sys[ev.Call]
	c.n.Add(1)
	c.ns.Add(ev.End - ev.Start)
	c.submitted.Add(int64(ev.Submitted))
	if ev.Wait {
		c.waits.Add(1)
	}
}

func (s *summary) RequestDone(ev sched.RequestEvent) {
	if int(ev.Op) >= len(s.ops) {
		return
	}
	o := &s.ops[ev.Op]
	o.n.Add(1)
	o.bytes.Add(int64(ev.N))
	if ev.Inline {
		o.inline.Add(1)
	}
	o.queue.Add(ev.Submit - ev.Enqueue)
	o.device.Add(ev.Complete - ev.Submit)
	o.resume.Add(ev.Resume - ev.Complete)
	o.total.Add(ev.Resume - ev.Enqueue)
}

func (s *summary) Finish(phase string) error {
	us := func(ns, n int64) string {
		return fmt.Sprintf("%.1f", float64(ns)/float64(max(n, 1))/float64(time.Microsecond))
	}
	fmt.Fprintf(s.out, "\n%s: scheduler requests (mean µs: queued before submit, submit to completion, completion to caller running)\n", phase)
	fmt.Fprintf(s.out, "  %-10s %10s %8s %10s %8s %8s %8s %8s\n", "op", "count", "inline%", "KiB/op", "queue", "kernel", "resume", "total")
	for op := range s.ops {
		o := &s.ops[op]
		n := o.n.Load()
		if n == 0 {
			continue
		}
		fmt.Fprintf(s.out, "  %-10s %10d %8.1f %10.1f %8s %8s %8s %8s\n", sched.Op(op), n,
			100*float64(o.inline.Load())/float64(n), float64(o.bytes.Load())/float64(n)/1024,
			us(o.queue.Load(), n), us(o.device.Load(), n), us(o.resume.Load(), n), us(o.total.Load(), n))
	}
	fmt.Fprintf(s.out, "  %-16s %10s %10s %12s %10s\n", "system call", "count", "waited", "submitted/op", "µs/call")
	for c := range s.sys {
		x := &s.sys[c]
		n := x.n.Load()
		if n == 0 {
			continue
		}
		fmt.Fprintf(s.out, "  %-16s %10d %10d %12.2f %10s\n", sched.Syscall(c), n, x.waits.Load(),
			float64(x.submitted.Load())/float64(n), us(x.ns.Load(), n))
	}
	return nil
}
