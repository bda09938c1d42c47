//go:build linux

package sched

import (
	"sync"
	"sync/atomic"
	"time"
)

// Requests on their callers' threads. Two kinds of request skip the loop
// and run as one blocking system call on the goroutine that made them,
// exactly as os.File would:
//
//   - the idle fast path: any request made while the scheduler has nothing
//     queued or in flight (waking the sleeping loop, and the loop waking
//     the caller, would cost two thread wake-ups);
//   - a latency-class sync (Fdatasync, Fsync), whatever is in flight. A
//     sync always holds a thread while the disk flushes: through the ring
//     one of io_uring's workers, here the caller's. Here it also skips two
//     hand-offs through the loop, which on a busy machine each wait for a
//     P: in Pebble's YCSB E (64 goroutines scanning cached blocks, 2 Ps)
//     a synced insert's p50 went from 8.8-15 ms to 5.4-6.0 ms, and its
//     p99 from 6.2x the default file system's to 1.9-2.6x (2026-11-27).
//
// Both share maxInline places, so the threads they hold stay bounded; a
// request finding no place free goes through the loop. A place keeps
// what the loop keeps for requests in the kernel: the slow-request watch
// (a timer per place, armed while its request runs, reporting as the
// loop does), and for the class policy, whether latency work is under
// way (callerLatency).

// callerPlace is one of the places where a request runs on its caller.
type callerPlace struct {
	busy atomic.Bool // taken (takePlace); only its taker clears it

	mu    sync.Mutex // guards r and the timer against the timer's own goroutine
	r     *request   // the request running, while watched
	timer *time.Timer
	s     *Scheduler
}

// callerLatency tells the loop's class policy about latency-class
// requests running on their callers.
type callerLatency struct {
	n    atomic.Int32 // running now
	last atomic.Int64 // Now when the last one ended; 0: none yet
}

// takePlace takes a free place, or returns nil.
func (s *Scheduler) takePlace() *callerPlace {
	for i := range s.places {
		p := &s.places[i]
		if !p.busy.Load() && p.busy.CompareAndSwap(false, true) {
			return p
		}
	}
	return nil
}

// latencyOnCaller reports whether r is a sync to run on its caller
// whatever is in flight (see above).
func (s *Scheduler) latencyOnCaller(r *request) bool {
	return r.class == Latency && (r.op == OpFdatasync || r.op == OpFsync) && s.syncOnCaller
}

// runAt runs r on its caller in place p, then frees p.
func (s *Scheduler) runAt(p *callerPlace, r *request) {
	start := r.tEnqueue
	if start == 0 && s.clock {
		start = Now() // no tracer: not read at enqueue
	}
	watched := s.slowThreshold > 0
	if watched {
		p.watch(s, r, start)
	}
	lat := r.class == Latency
	if lat {
		s.callerLat.n.Add(1)
	}
	blockingDo(r, s.tracer)
	var end int64
	if s.clock || lat {
		end = Now()
	}
	if lat {
		// The end first: the loop then sees either one running or
		// how recently the last ended.
		s.callerLat.last.Store(end)
		s.callerLat.n.Add(-1)
	}
	if watched {
		p.unwatch(s)
	}
	if s.statsOn {
		s.stats.inline.Add(1)
		s.stats.done(r, start, start, end)
	}
	p.busy.Store(false)
}

// watch arms p's timer for r, which began at start.
func (p *callerPlace) watch(s *Scheduler, r *request, start int64) {
	r.tSubmit = start
	p.mu.Lock()
	p.r = r
	if p.timer == nil {
		p.s = s
		p.timer = time.AfterFunc(s.slowThreshold, p.fire)
	} else {
		p.timer.Reset(s.slowThreshold)
	}
	p.mu.Unlock()
}

// unwatch disarms p's timer; a report already made is counted as over.
func (p *callerPlace) unwatch(s *Scheduler) {
	p.mu.Lock()
	p.timer.Stop()
	if p.r.slowReports > 0 {
		s.stats.stalled.Add(-1)
	}
	p.r = nil
	p.mu.Unlock()
}

// fire runs on the timer's goroutine: it reports the request in p if it
// is due, and rearms the timer for its next report. A firing left over
// from an earlier request finds nothing, or a request not yet due.
func (p *callerPlace) fire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.r
	if r == nil {
		return
	}
	s := p.s
	ns := int64(s.slowThreshold)
	now := Now()
	if due := r.tSubmit + ns<<min(r.slowReports, 40); now >= due {
		// The caller holds its reference to s (it runs a request),
		// so the loop, and with it the reports' channel, is alive.
		s.reportSlow(r, 0, now, s.slowCh)
	}
	p.timer.Reset(time.Duration(r.tSubmit + ns<<min(r.slowReports, 40) - now))
}
