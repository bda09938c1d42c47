//go:build linux

package sched

import "golang.org/x/sys/unix"

// blockingDo performs r with plain system calls on the caller's goroutine:
// the runtime parks an OS thread per call in flight, exactly as os.File
// does. It is the baseline and the last fallback. Each attempt goes
// through the scheduler's calls (PathCaller), where Options.Faults and
// Options.Tracer see it.
func (s *Scheduler) blockingDo(r *request) {
	if r.op == OpNop {
		r.submits++
		return
	}
	for {
		c := r.sysCall(PathCaller)
		r.submits++
		n, err := s.call(c)
		res := int32(n)
		if err != nil {
			res = -int32(err.(unix.Errno))
		}
		if finish(r, res) {
			return
		}
	}
}
