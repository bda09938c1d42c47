//go:build linux

package sched

import (
	"time"
)

// Slow requests: the loop knows when each request in the kernel was first
// submitted, and reports those still in flight after
// Options.SlowThreshold, then again each time their wait doubles (at 1x,
// 2x, 4x... the threshold), so a stalling disk is named within the
// threshold and a stall that goes on keeps being named without a flood.
//
// The loop does not poll for it. It checks ages only when the oldest
// request in flight is due (it keeps the time of the next due report),
// either after reaping completions, which reads the clock anyway, or
// when it would sleep: then it sleeps in the kernel with a timeout that
// ends at that time (io_uring_enter with IORING_ENTER_EXT_ARG and a
// timespec, io_getevents with a timeout), and with no timeout at all when
// nothing is in flight. A check scans the in-flight slots (Options.Entries
// of them) and happens at most once per threshold while requests complete
// normally.
//
// Reports go to Options.OnSlow and to a Tracer that implements SlowTracer
// on a goroutine of their own, through a bounded channel: the loop never
// waits for them. When the channel is full a report is dropped and
// counted (Stats.Slow.Dropped).

// slowQueue is how many reports wait for the reporting goroutine before
// new ones are dropped.
const slowQueue = 64

// startSlow sets up slow-request detection for s from opts.
func (s *Scheduler) startSlow(opts Options) {
	s.slowThreshold = opts.SlowThreshold
	if s.slowThreshold == 0 {
		s.slowThreshold = DefaultSlowThreshold
	}
	if s.slowThreshold < 0 {
		s.slowThreshold = 0
		return
	}
	// Requests on their callers are watched by a timer (caller_linux.go).
	s.watch.every = max(s.slowThreshold/4, time.Millisecond)
	s.watch.timer = time.AfterFunc(time.Hour, s.checkSlots)
	s.watch.timer.Stop()
	st, _ := opts.Tracer.(SlowTracer)
	fn := opts.OnSlow
	if fn == nil && st == nil {
		return
	}
	ch := make(chan SlowIO, slowQueue)
	s.slowCh = ch
	go func() {
		for ev := range ch {
			if fn != nil {
				fn(ev)
			}
			if st != nil {
				st.SlowIO(ev)
			}
		}
	}()
}

// checkSlow reports the requests in flight that are due at now, and sets
// the time of the next check (0: nothing in flight).
func (l *loop) checkSlow(now int64) {
	next := int64(0)
	for _, r := range l.slots[:l.wakeSlot] {
		if r == nil {
			continue
		}
		due := l.slowDue(r)
		if now >= due {
			l.s.reportSlow(r, r.done, now, l.slowCh)
			due = l.slowDue(r)
		}
		if next == 0 || due < next {
			next = due
		}
	}
	l.slowAt = next
	l.scanStalls()
}

// slowDue is when r is next to be reported.
func (l *loop) slowDue(r *request) int64 {
	return r.tSubmit + l.slowNs<<min(r.slowReports, 40)
}

// reportSlow reports r, first submitted at r.tSubmit and with done bytes
// transferred, as slow at now, to ch if it is not nil. The loop calls it
// for requests in the kernel, a slot's timer for one on its caller
// (caller_linux.go), which cannot read r.done as it changes and passes 0.
func (s *Scheduler) reportSlow(r *request, done int, now int64, ch chan<- SlowIO) {
	r.slowReports++
	st := &s.stats
	if r.slowReports == 1 {
		st.stalled.Add(1)
	}
	st.slowReports.Add(1)
	if k := int(r.slowReports) - 1; k < SlowDoublings {
		st.slowDoublings[k].Add(1)
	}
	waited := now - r.tSubmit
	for {
		old := st.longest.Load()
		if waited <= old || st.longest.CompareAndSwap(old, waited) {
			break
		}
	}
	if ch == nil {
		return
	}
	ev := SlowIO{Op: r.op, Fd: r.fd, Name: r.fileName(), Class: r.class, Waited: time.Duration(waited), Report: int(r.slowReports)}
	if r.op == OpRead || r.op == OpWrite {
		ev.Off, ev.Len = r.off+int64(done), len(r.buf)-done
	}
	select {
	case ch <- ev:
	default:
		st.slowDropped.Add(1)
	}
}

// sleepTimeout is how long the loop may sleep in the kernel: until the
// next slow check, or for good (-1) when nothing in flight can become
// slow. It runs the check first if it is due.
func (l *loop) sleepTimeout() time.Duration {
	if l.slowAt == 0 {
		return -1
	}
	now := Now()
	if now >= l.slowAt {
		l.checkSlow(now)
		if l.slowAt == 0 {
			return -1
		}
	}
	return time.Duration(l.slowAt - now)
}
