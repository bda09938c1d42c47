//go:build linux

package sched

// The wake-up relay: how the loop wakes the callers whose requests
// completed without losing its place on its P.
//
// A goroutine woken by a channel send is put in the waker's P's run
// queue. If the loop woke every caller of a round itself and then went
// back to the kernel, those callers, and the loop after them, would each
// wait for a P; when the program's own goroutines keep every P busy they
// wait for one of those to be preempted, about 10 ms each, and the
// process's I/O advances one round per preemption. A thread blocked in
// pread (os.File) does not have that problem to the same degree: each of
// its many threads gives up its P when it enters the kernel, and takes
// one when it comes back.
//
// So the loop wakes only the first caller that is already waiting, and
// gives it its P: the loop parks on the scheduler's baton, and the woken
// caller runs next on that P (the runtime's runnext, which inherits the
// time slice and so is not interleaved with the global run queue). Each
// caller, as soon as it resumes in await, wakes the next caller of the
// round the same way, and the last one hands the baton back: the loop
// resumes next on the P that caller ran on, and finds the requests those
// callers made meanwhile, all together. The round's callers thus run one
// after another on the P the loop had, not behind the program's
// goroutines; an idle P may still steal any of them.
//
// Only callers already parked in await join a relay (request.waiting):
// a started Call may be waited for late or never, and a relay that waited
// for its caller would stall the loop. A Batch's requests are woken as
// before (the Batch waits for all of them), and a loop locked to its
// thread does not park (parking a locked goroutine hands its thread to
// another: it wakes its callers directly).

// relay is the loop's list of callers to wake in the current round.
type relay struct{ first, last *request }

// add appends r, whose caller waits in await, to the relay.
func (w *relay) add(r *request) {
	if w.last == nil {
		w.first = r
	} else {
		w.last.relayNext = r
	}
	w.last = r
}

// wake ends r for its caller: through the relay when its caller waits in
// await, else at once.
func (l *loop) wake(r *request) {
	if !l.locked && r.group == nil && r.waiting.Load() {
		l.relay.add(r)
		return
	}
	g := r.group // read before the wake-up: the caller may recycle r
	r.wake <- struct{}{}
	g.done()
}

// runRelay wakes the round's relay, if it has callers, and waits until
// its last caller hands the loop's P back. It reports whether it ran one.
func (l *loop) runRelay() bool {
	first := l.relay.first
	if first == nil {
		return false
	}
	l.relay.last.relayEnd = true
	l.relay = relay{}
	first.wake <- struct{}{}
	<-l.s.baton
	return true
}

// passRelay is the caller's part, as it resumes in await: wake the next
// caller of the relay, or hand the loop its P back.
func (s *Scheduler) passRelay(r *request) {
	r.waiting.Store(false)
	if next := r.relayNext; next != nil {
		r.relayNext = nil
		next.wake <- struct{}{}
	} else if r.relayEnd {
		r.relayEnd = false
		s.baton <- struct{}{}
	}
}
