//go:build linux

package sched

import (
	"runtime"
	"time"

	"github.com/diskio-go/diskio/uring"
)

// loop is the state of the scheduler goroutine. Only that goroutine touches
// it.
type loop struct {
	s         *Scheduler
	q         queue
	slots     []*request // in flight, by slot; the last slot is the wake-up read
	free      []uint32   // free slots
	wakeSlot  uint32
	armed     bool       // the eventfd read is in the kernel
	retry     []*request // short or interrupted requests to resubmit
	pending   *request   // taken from incoming, oldest first, waiting for a slot
	last      *request   // the newest in pending
	prepared  int        // SQEs prepared since the last submitAndWait
	inflight  int        // requests in the kernel, not counting the wake-up read
	done      []completion
	relay     relay // callers to wake in this round (relay_linux.go)
	spin      time.Duration
	tracer    Tracer
	stats     *stats
	now       int64 // clock when the last completions were reaped
	acceptNow int64 // clock of this accept round's submissions, 0 until read

	slowNs int64       // Options.SlowThreshold in ns; 0: off
	slowAt int64       // when the oldest request in flight is due a slow check (Now); 0: none
	slowCh chan SlowIO // reports to the reporting goroutine, or nil
	// stallScan: a request reported slow completed, the oldest stall
	// is to be found again (scanStalls).
	stallScan bool

	queued     int             // requests in pending and bgPending
	inflightBy [NumClasses]int // requests in the kernel, by class
	shown      [NumClasses]int // inflightBy as last published to stats
	shownQ     int             // queued as last published
	shownB     int             // the background bound as last published
	cls        classPolicy     // class_linux.go

	ring   *uringQueue // the io_uring queue under any fault injector; nil on AIO
	locked bool        // the goroutine is locked to its OS thread
	recap  bool        // apply the worker cap to this thread after its next submission
}

// inflightSpinRounds is how many rounds the loop polls without progress,
// while requests are in the kernel, before it sleeps there until a
// completion or a producer's wake-up (see main). A round without work is
// a few loads of shared words; these rounds last a few microseconds.
const inflightSpinRounds = 128

func openQueue(b Backend, opts Options) (queue, error) {
	switch b {
	case URing:
		q, err := newUringQueue(uint32(opts.Entries)+1, opts.SetupFlags, opts.Tracer)
		if q != nil {
			q.prio = opts.Classes.prios()
		}
		return q, err
	case AIO:
		q, err := newAIOQueue(opts.Entries+1, opts.Tracer)
		if q != nil {
			q.prio = opts.Classes.prios()
		}
		return q, err
	}
	panic("sched: no queue for backend " + string(b))
}

// run is the scheduler goroutine. It stays on one OS thread for its whole
// life when the ring is bound to its creating thread
// (SINGLE_ISSUER, DEFER_TASKRUN); otherwise from the first request that
// may go to an io_uring worker on (lockForWorkers).
func (s *Scheduler) run(b Backend, opts Options, ready chan<- error) {
	locked := opts.SetupFlags&(uring.IORING_SETUP_SINGLE_ISSUER|uring.IORING_SETUP_DEFER_TASKRUN) != 0
	if locked {
		// Never unlocked: when run returns, the runtime ends the thread.
		runtime.LockOSThread()
		s.locked.Store(true)
	}
	q, err := openQueue(b, opts)
	if err != nil {
		ready <- err
		return
	}
	uq, _ := q.(*uringQueue)
	if uq != nil {
		s.setupFixed(uq, opts)
		s.workers = uq.capWorkers(opts.IOWQMaxWorkers)
		s.ringUnlink = uq.unlinkat
	}
	if opts.Faults != nil {
		q = newFaultQueue(q, opts.Entries+1, opts.Faults)
	}
	n := opts.Entries
	l := &loop{
		s:        s,
		q:        q,
		slots:    make([]*request, n+1),
		free:     make([]uint32, n),
		wakeSlot: uint32(n),
		done:     make([]completion, 2*(n+1)),
		spin:     opts.Spin,
		tracer:   opts.Tracer,
		retry:    make([]*request, 0, n),
		ring:     uq,
		locked:   locked,
	}
	l.stats = &s.stats
	l.slowNs, l.slowCh = int64(s.slowThreshold), s.slowCh
	l.cls = newClassPolicy(opts.Classes, n)
	l.cls.callers = &s.callerLat
	for i := range l.free {
		l.free[i] = uint32(n - 1 - i)
	}
	ready <- nil
	l.main()
	if s.slowCh != nil {
		close(s.slowCh) // only the loop sends on it
	}
	close(s.exited)
}

func (l *loop) main() {
	s := l.s
	idle := 0 // rounds without progress
	var idleSince time.Time
	for {
		progress := l.accept()
		if l.prepared > 0 {
			l.submitAndWait(false, -1)
			l.prepared = 0
			if l.recap {
				l.ring.recapWorkers()
				l.recap = false
			}
		}
		n, err := l.q.reap(l.done)
		if err != nil {
			l.fatal(err)
		}
		if n > 0 {
			l.now = Now() // one clock read stamps the whole batch
		}
		woke := false
		for _, c := range l.done[:n] {
			woke = l.complete(c) || woke
		}
		if l.slowAt != 0 && n > 0 && l.now >= l.slowAt {
			l.checkSlow(l.now)
		}
		if l.stallScan {
			l.scanStalls()
		}
		l.publish()
		if l.runRelay() {
			// The callers woken have run, on this P, and the
			// loop has it back (relay_linux.go).
		} else if woke && !l.locked {
			// Let the callers just woken run on this thread now:
			// the first waits in this P's runnext, and would
			// otherwise wait for another thread to be woken to
			// take it, while a caller answering its completion
			// with its next request (a stream refilling its
			// read-ahead, a reader in a loop) finds this loop
			// awake. Gosched wakes an idle P's thread for the
			// loop, which then finds those requests together. A
			// locked loop (see run) would hand its P to another
			// thread instead: it keeps it. Yielding only when one
			// caller was woken (the others in the run queue, for
			// idle Ps to steal) costs more CPU per request than it
			// saves (docs/notes/2026-11-28-design-figures.md).
			runtime.Gosched()
		}
		if progress || n > 0 {
			idle = 0
			continue
		}
		if l.inflight == 0 && len(l.retry) == 0 && s.state.Load() == stateClosed && l.pending == nil && l.cls.held == nil && s.incoming.Load() == nil {
			l.shutdown()
			return
		}
		if len(l.free) == 0 {
			// Every slot is in flight: nothing can be submitted
			// before a completion, and the kernel says when one
			// arrives. Spinning would burn the core the callers
			// need, and producers need not wake the loop, so it
			// waits without announcing a sleep.
			l.submitAndWait(true, l.sleepTimeout())
			idle = 0
			continue
		}
		// Spin a little before sleeping: the next request or
		// completion often arrives within microseconds.
		//
		// With requests in the kernel, the spin is a few rounds,
		// counted: their completions end a sleep in the kernel
		// anyway, and a device slower than the spin made the loop pay
		// for the whole spin and then the sleep. The rounds still
		// catch the next request of a caller just woken on another
		// thread, which would otherwise have to write the eventfd.
		//
		// With nothing in flight only a new request ends the sleep,
		// and its producer pays the eventfd write and the wake-up:
		// the loop spins for Options.Spin. The clock is read every 16
		// rounds only, the first time after 16 rounds, so that spins
		// ended by the next arrival read no clock.
		idle++
		if l.spin > 0 {
			if l.inflight > 0 {
				if idle < inflightSpinRounds {
					continue
				}
			} else if idle%16 != 0 {
				continue
			} else if idle == 16 {
				idleSince = time.Now()
				continue
			} else if time.Since(idleSince) < l.spin {
				continue
			}
		}
		// Nothing to do: sleep in the kernel until a completion or a
		// producer's write to the eventfd. Announce the sleep first,
		// then look once more for requests that raced with it.
		// Requests waiting for a slot do not keep the loop awake: the
		// slots are in flight, and their completions end the sleep.
		s.sleeping.Store(true)
		if s.incoming.Load() != nil || len(l.free) > 0 && (l.pending != nil || len(l.retry) > 0 || l.cls.held != nil && l.cls.bgIn < l.cls.limit(l.now)) || s.state.Load() == stateClosed {
			s.sleeping.Store(false)
			idle = 0
			continue
		}
		if !l.armed {
			l.q.armWake(s.efd, l.wakeSlot)
			l.armed = true
		}
		l.submitAndWait(true, l.sleepTimeout())
		s.sleeping.Store(false)
		idle = 0
	}
}

// submitAndWait submits what is prepared, and with wait sleeps in the
// kernel until a completion arrives, or for at most timeout when it is
// not negative: the queue's enter, counted in Stats.Enters and Sleeps.
// A failure of the queue itself is fatal; uring.ErrBusy is not (what was
// not submitted stays prepared, and goes with the next call).
func (l *loop) submitAndWait(wait bool, timeout time.Duration) {
	if err := l.q.enter(wait, timeout); err != nil && err != uring.ErrBusy {
		l.fatal(err)
	}
	l.stats.enters.Add(1)
	if wait {
		l.stats.sleeps.Add(1)
	}
}

// accept moves requests from the retry list, then from the incoming stack
// (oldest first), into the kernel queue while slots are free. It never
// blocks.
func (l *loop) accept() bool {
	progress := false
	l.acceptNow = 0
	for len(l.retry) > 0 && len(l.free) > 0 {
		r := l.retry[len(l.retry)-1]
		l.retry = l.retry[:len(l.retry)-1]
		l.submit(r)
		progress = true
	}
	if len(l.free) == 0 {
		return progress
	}
	l.take()
	if l.cls.held != nil && l.releaseHeld() {
		progress = true
	}
	for l.pending != nil && len(l.free) > 0 {
		r := l.pending
		l.pending = r.next
		r.next = nil
		progress = true
		switch r.op {
		case opRegisterFile:
			l.queued--
			r.err = l.q.registerFile(r.file)
			r.wake <- struct{}{}
		case opUnregisterFile:
			l.queued--
			r.err = l.q.unregisterFile(r.file)
			r.wake <- struct{}{}
		default:
			if r.class == Background && l.cls.on && (l.cls.held != nil || l.cls.bgIn >= l.cls.limit(l.now)) {
				l.cls.holdBack(r) // still queued
				continue
			}
			l.queued--
			if r.class == Latency && l.cls.on {
				l.cls.latQueued--
			}
			l.submit(r)
		}
	}
	return progress
}

// releaseHeld submits the background requests held back by the bound,
// oldest first, as far as the bound and the free slots allow.
func (l *loop) releaseHeld() bool {
	p := &l.cls
	moved := false
	for p.held != nil && len(l.free) > 0 && p.bgIn < p.limit(l.now) {
		r := p.held
		p.held = r.next
		r.next = nil
		if p.held == nil {
			p.heldLast = nil
		}
		l.queued--
		l.submit(r)
		moved = true
	}
	return moved
}

// take empties the incoming stack into the end of the pending list,
// restoring arrival order (the stack holds the newest first).
func (l *loop) take() {
	// Look before swapping: the spinning loop would otherwise write the
	// producers' cache line on every round.
	if l.s.incoming.Load() == nil {
		return
	}
	head := l.s.incoming.Swap(nil)
	now := Now() // one clock read stamps the whole batch
	// Also the loop's clock (completions are stamped with a fresh
	// read after each reap): the background bound's Hold is
	// judged against it, and after an idle spell the last reap's
	// time would keep the bound on for the first batch. And the
	// submission time of what this round submits (accept runs take
	// before its submissions): the batch is submitted now.
	l.now = now
	if l.acceptNow == 0 {
		l.acceptNow = now
	}
	var first, last *request
	for r := head; r != nil; {
		r.tTaken = now
		if r.class == Latency && l.cls.on {
			l.cls.latQueued++
		}
		next := r.next
		r.next = first
		first = r
		if last == nil {
			last = r
		}
		r = next
		l.queued++
	}
	if l.pending == nil {
		l.pending = first
	} else {
		l.last.next = first
	}
	l.last = last
}

func (l *loop) submit(r *request) {
	l.lockForWorkers(r)
	slot := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	l.slots[slot] = r
	r.fixed = l.q.prepare(r, slot)
	l.prepared++
	l.inflight++
	r.submits++
	l.inflightBy[r.class]++
	if l.cls.on {
		switch r.class {
		case Background:
			l.cls.bgIn++
			r.bounded = l.cls.latencyWaits(l.now)
		case Latency:
			l.cls.latIn++
		}
	}
	if r.tSubmit == 0 {
		if l.acceptNow == 0 {
			l.acceptNow = Now() // one clock read stamps the whole batch
		}
		// A request that arrived after the clock was read is
		// stamped with its own enqueue time, never earlier.
		r.tSubmit = max(l.acceptNow, r.tEnqueue)
	}
	if l.slowNs != 0 && l.slowAt == 0 {
		l.slowAt = r.tSubmit + l.slowNs
	}
}

// complete ends the request in c's slot, or queues it to be resubmitted;
// it reports whether it woke a caller.
func (l *loop) complete(c completion) bool {
	if c.slot == l.wakeSlot {
		l.armed = false
		return false
	}
	r := l.slots[c.slot]
	l.slots[c.slot] = nil
	l.free = append(l.free, c.slot)
	l.inflight--
	l.inflightBy[r.class]--
	if l.cls.on {
		switch r.class {
		case Background:
			l.cls.bgIn--
		case Latency:
			l.cls.latIn--
			l.cls.latLast = l.now
		}
	}
	if !finish(r, c.res) {
		l.retry = append(l.retry, r)
		return false
	}
	r.tComplete = l.now
	if r.bounded && r.err != errWouldBlock {
		l.cls.adapt(l.now - r.tSubmit)
	}
	if r.slowReports > 0 {
		l.s.stats.stalled.Add(-1)
		l.stallScan = true
	}
	if l.stats != nil && r.err != errWouldBlock { // else recorded when its caller made it
		l.stats.done(r, r.tTaken, r.tSubmit, l.now)
	}
	l.wake(r)
	return true
}

// fatal handles a failure of the kernel queue itself (not of a request),
// which the loop's invariants rule out. It panics: the requests in flight
// may still be written by the kernel, so their callers can neither be
// failed nor left waiting safely.
func (l *loop) fatal(err error) {
	panic("sched: kernel queue failed: " + err.Error())
}

// shutdown releases the kernel queue once nothing is in flight. The armed
// eventfd read is completed first (by writing the eventfd ourselves), so
// the kernel never writes into the wake-up buffer after it is unmapped.
func (l *loop) shutdown() {
	for l.armed {
		l.s.wakeLoop()
		if err := l.q.enter(true, -1); err != nil && err != uring.ErrBusy {
			l.fatal(err)
		}
		n, err := l.q.reap(l.done)
		if err != nil {
			l.fatal(err)
		}
		for _, c := range l.done[:n] {
			l.complete(c)
		}
		l.runRelay()
	}
	if err := l.q.close(); err != nil {
		l.fatal(err)
	}
	// Closing the ring dropped its registration of the arena; nothing
	// the kernel holds points into it any more.
	if l.s.arena != nil {
		l.s.arena.close()
	}
}

// publish stores the loop's gauges for Stats, when they changed.
func (l *loop) publish() {
	for c := range l.inflightBy {
		if l.inflightBy[c] != l.shown[c] {
			l.shown[c] = l.inflightBy[c]
			l.stats.inflight[c].Store(int64(l.shown[c]))
		}
	}
	if l.queued != l.shownQ {
		l.shownQ = l.queued
		l.stats.queued.Store(int64(l.queued))
	}
	if b := l.cls.bound >> 8; l.cls.on && b != l.shownB {
		l.shownB = b
		l.stats.bound.Store(int64(b))
	}
}
