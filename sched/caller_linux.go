//go:build linux

package sched

import (
	"sync"
	"sync/atomic"
	"time"
)

// Requests on their callers' threads. Three kinds of request skip the
// loop and run as one blocking system call on the goroutine that made
// them, exactly as os.File would:
//
//   - the idle fast path: any request made while the scheduler has nothing
//     queued or in flight (waking the sleeping loop, and the loop waking
//     the caller, would cost two thread wake-ups);
//   - a latency-class sync (Fdatasync, Fsync), whatever is in flight. A
//     sync holds a thread while the disk flushes either way (through the
//     ring one of io_uring's workers, here the caller's); here it also
//     skips two hand-offs through the loop, which on a busy machine each
//     wait for a P;
//   - on io_uring, work the ring would hand to one of its worker threads:
//     fsync, fdatasync, fallocate and unlink (blocksWorker), and a write
//     of the latency or background class that the kernel cannot start
//     without blocking. Such a write is sent to the ring with
//     RWF_NOWAIT; an O_DIRECT overwrite of written blocks completes
//     there, while one that extends the file (ext4 takes the inode's lock
//     for it), or a buffered one, comes back at once with EAGAIN
//     (errWouldBlock) and its caller makes the rest. Once one has come
//     back, the file's next writes go straight to their callers, all but
//     one in nowaitProbe, which tries the ring again (class_linux.go).
//     Only calls that wait do so (WriteAt, WriteAtClass, a File's
//     writes): a started Call or a Batch keeps its caller going, so its
//     writes go to the workers. Through a worker such work would hold a
//     thread as long, and the loop would have to lock itself to one
//     thread so that the ring keeps a single worker pool, which starts
//     the runtime's template thread too.
//
// Once something has gone to the workers (the loop locked itself for it),
// the third kind goes there too: the pool is there, and work for it adds
// no thread beyond the cap, where callers' slots would add theirs.
//
// Unclassified writes still go to the workers when they would block, as
// they did before classes (a program that classifies its files says what
// they are; one that does not gets the ring's behaviour): where many
// goroutines write one file and sync it (group commit), io_uring's worker
// runs the writes back to back while the syncs run beside them, so each
// sync covers many writes; made by their callers, quick syncs run back to
// back and each covers one or two. Classified files are an engine's: a WAL
// written by one flusher, tables written front to back by a flush or a
// compaction, which rarely have many writers per file.
//
// The first two share maxInline slots, but for work of the third kind
// on io_uring (syncs included), which takes only its own slots, so that
// the two never hold threads for it at once; a request finding none free
// goes through the loop. The third kind has slots of its own, as many
// as the worker cap (callerWorkers); a request finding none free waits
// for one, parked, in a slotQueue where latency class goes first.
// Either way the threads they hold stay bounded: at most maxInline + the
// cap. A slot keeps what the loop keeps for requests in the kernel: the
// slow-request watch, and for the class policy, whether latency work is
// under way (callerLatency).
//
// The watch is one timer per scheduler, armed while slots are in use:
// every quarter of the threshold it reports the requests in slots that
// are due, as the loop reports its own (so within 1.25x the threshold),
// and it disarms itself once it finds no slot in use. A request on its
// caller pays two uncontended locks and an atomic load for it, not a
// timer of its own.
//
// The measurements behind these choices are in
// docs/notes/2026-11-28-design-figures.md.

// callerSlot is one of the Scheduler's callerSlots: a request runs on
// its caller's thread only while it holds one, so that the threads
// callers hold in system calls stay as many as there are slots.
type callerSlot struct {
	busy     atomic.Bool // taken (takeSlot, awaitSlot); freed by freeSlot
	blocking bool        // one of the slots for work io_uring would hand to a worker
	// Under slotQueue.mu: write, the slot runs writes to fd
	// (slotQueue.writes); queued, the writes to fd waiting behind the
	// one running (onCaller).
	write  bool
	fd     int32
	queued reqList

	mu sync.Mutex // guards r against the watch
	r  *request   // the request running, while watched
}

// callerLatency tells the loop's class policy about latency-class
// requests running on their callers.
type callerLatency struct {
	n    atomic.Int32 // running now
	last atomic.Int64 // Now when the last one ended; 0: none yet
}

// callerWatch is the slow-request watch over the slots.
type callerWatch struct {
	armed atomic.Bool
	timer *time.Timer // made by startSlow, stopped
	every time.Duration
}

// slotQueue is where requests wait for a slot for blocking work, in
// FIFO lists linked by request.next, by rank: latency class first, then
// syncs, fallocate and unlink, then writes that came back from the ring.
// Writes hold at most maxWrites slots (one less than there are), so a
// sync, which a whole group of writers waits for, never queues behind
// them: extending writes to one file serialise on its inode lock anyway
// (io_uring's own worker pool hashes them to one worker, for the same
// reason). A freed slot goes to the first waiter it may go to, so it
// never sits free while one waits.
type slotQueue struct {
	mu        sync.Mutex
	waiting   [3]reqList // by slotRank
	writes    int        // slots held by writes
	maxWrites int
}

// reqList is a FIFO list of requests linked by request.next.
type reqList struct{ first, last *request }

func (l *reqList) push(r *request) {
	r.next = nil
	if l.last == nil {
		l.first = r
	} else {
		l.last.next = r
	}
	l.last = r
}

// pop takes the first request, or returns nil.
func (l *reqList) pop() *request {
	r := l.first
	if r == nil {
		return nil
	}
	if l.first = r.next; l.first == nil {
		l.last = nil
	}
	r.next = nil
	return r
}

// slotRank is r's list in a slotQueue.
func slotRank(r *request) int {
	switch {
	case r.class == Latency:
		return 0
	case blocksWorker(r.op):
		return 1
	}
	return 2
}

// blocksWorker reports whether io_uring always hands op to a worker
// thread: it cannot start without blocking.
func blocksWorker(op Op) bool {
	switch op {
	case OpFsync, OpFdatasync, OpFallocate, OpUnlink:
		return true
	}
	return false
}

// callerWorkers is how many slots are kept for work io_uring would hand
// to a worker: as many as the worker cap allows workers (n, resolved
// from Options.IOWQMaxWorkers), or the default cap where there is none.
func callerWorkers(n int) int {
	if n <= 0 {
		return defaultIOWQMaxWorkers
	}
	return min(n, 1024)
}

// awaitSlot takes a free slot for blocking work, or waits for one,
// parked (no thread held), behind the waiters of r's rank or higher. A
// write to a descriptor whose writes run in a slot already is queued
// there instead, and awaitSlot returns nil at once (onCaller).
func (s *Scheduler) awaitSlot(r *request) *callerSlot {
	q := &s.slotQueue
	k := slotRank(r)
	q.mu.Lock()
	if k == 2 {
		for i := maxInline; i < len(s.callerSlots); i++ {
			if p := &s.callerSlots[i]; p.write && p.fd == r.fd {
				// Behind the writes to the same file running there.
				p.queued.push(r)
				q.mu.Unlock()
				return nil
			}
		}
	}
	if k < 2 || q.writes < q.maxWrites {
		for i := maxInline; i < len(s.callerSlots); i++ {
			if p := &s.callerSlots[i]; !p.busy.Load() {
				p.busy.Store(true)
				if k == 2 {
					q.writes++
					p.write, p.fd = true, r.fd
				}
				q.mu.Unlock()
				return p
			}
		}
	}
	q.waiting[k].push(r)
	q.mu.Unlock()
	<-r.wake // freeSlot hands one over
	p := r.callerSlot
	r.callerSlot = nil
	return p
}

// freeSlot frees p, or hands it to the first request waiting for one
// that may take it.
func (s *Scheduler) freeSlot(p *callerSlot) {
	if !p.blocking {
		p.busy.Store(false)
		return
	}
	q := &s.slotQueue
	q.mu.Lock()
	s.freeSlotLocked(p)
}

// freeSlotLocked is freeSlot for a blocking slot, with
// slotQueue.mu held; it unlocks it.
func (s *Scheduler) freeSlotLocked(p *callerSlot) {
	q := &s.slotQueue
	if p.write {
		q.writes--
		p.write = false
	}
	for k := range q.waiting {
		if k == 2 && q.writes >= q.maxWrites {
			continue
		}
		r := q.waiting[k].pop()
		if r == nil {
			continue
		}
		if k == 2 {
			q.writes++
			p.write, p.fd = true, r.fd
		}
		r.callerSlot = p
		q.mu.Unlock()
		r.wake <- struct{}{}
		return
	}
	p.busy.Store(false)
	q.mu.Unlock()
}

// takeSlot takes a free slot of the idle fast path and latency-class
// syncs, or returns nil.
func (s *Scheduler) takeSlot() *callerSlot {
	for i := range maxInline {
		p := &s.callerSlots[i]
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

// runAt runs r on its caller in slot p, then frees p.
func (s *Scheduler) runAt(p *callerSlot, r *request) {
	s.runIn(p, r)
	s.freeSlot(p)
}

// onCaller runs r on its caller in a slot for blocking work: a sync,
// fallocate or unlink, or the rest of a classified write that came back
// from the ring (it would block).
//
// Writes to one descriptor run one after another in one slot, as
// io_uring's workers run them (it hashes writes to a regular file by
// inode, so one worker runs them back to back): a write that finds one
// running is queued behind it, and its caller waits, parked. The caller
// that took the slot makes its own request, then, if others queued
// meanwhile, leaves them to a goroutine that makes them in that slot and
// wakes their callers (drainWrites), so that no caller waits for requests
// queued after its own.
func (s *Scheduler) onCaller(r *request) {
	p := s.awaitSlot(r)
	if p == nil {
		<-r.wake // made by drainWrites
		return
	}
	s.runIn(p, r)
	if next := s.nextWrite(p); next != nil {
		go s.drainWrites(p, next)
	}
}

// nextWrite takes the next request queued behind p's writes, or frees p
// and returns nil.
func (s *Scheduler) nextWrite(p *callerSlot) *request {
	q := &s.slotQueue
	q.mu.Lock()
	r := p.queued.pop()
	if r == nil {
		s.freeSlotLocked(p)
		return nil
	}
	q.mu.Unlock()
	return r
}

// drainWrites makes the requests queued in p, from r on, and frees p. A
// request's caller holds its reference on s until woken.
func (s *Scheduler) drainWrites(p *callerSlot, r *request) {
	for r != nil {
		s.runIn(p, r)
		next := s.nextWrite(p) // before the wake-up: r is its caller's again
		r.wake <- struct{}{}
		r = next
	}
}

// runIn runs r on the calling goroutine in slot p, which stays taken.
func (s *Scheduler) runIn(p *callerSlot, r *request) {
	start := s.callerStart(r)
	watched := s.watch.timer != nil
	if watched {
		r.tSubmit = start
		p.mu.Lock()
		p.r = r
		p.mu.Unlock()
		if !s.watch.armed.Load() && s.watch.armed.CompareAndSwap(false, true) {
			s.watch.timer.Reset(s.watch.every)
		}
	}
	lat := r.class == Latency
	if lat {
		s.callerLat.n.Add(1)
	}
	end := s.runTimed(r, start)
	if lat {
		if end == 0 {
			end = Now()
		}
		// The end first: the loop then sees either one running or
		// how recently the last ended.
		s.callerLat.last.Store(end)
		s.callerLat.n.Add(-1)
	}
	if watched {
		p.mu.Lock()
		if r.slowReports > 0 {
			s.stats.stalled.Add(-1)
		}
		p.r = nil
		p.mu.Unlock()
	}
}

// checkSlots runs on the watch's timer: it reports the requests in
// slots that are due, and rearms the timer while any slot is in use.
func (s *Scheduler) checkSlots() {
	if s.watchSlots(true) {
		s.watch.timer.Reset(s.watch.every)
		return
	}
	s.watch.armed.Store(false)
	// A slot taken since the scan saw the watch armed and left it to
	// this timer: look again, after disarming.
	if s.watchSlots(false) && s.watch.armed.CompareAndSwap(false, true) {
		s.watch.timer.Reset(s.watch.every)
	}
}

// watchSlots reports whether a slot holds a request, and with report
// reports those due. A request's caller holds its reference to s while
// it is in a slot, so the loop, and the reports' channel, are alive.
func (s *Scheduler) watchSlots(report bool) bool {
	busy := false
	ns := int64(s.slowThreshold)
	var now int64
	for i := range s.callerSlots {
		p := &s.callerSlots[i]
		p.mu.Lock()
		if r := p.r; r != nil {
			busy = true
			if report {
				if now == 0 {
					now = Now()
				}
				if now >= r.tSubmit+ns<<min(r.slowReports, 40) {
					s.reportSlow(r, 0, now, s.slowCh)
				}
			}
		}
		p.mu.Unlock()
	}
	return busy
}
