//go:build linux

package sched

import "time"

// faultQueue sits between the loop and a kernel queue and applies a
// FaultInjector's faults. Injected errors and dropped flushes never reach
// the kernel; short transfers do, shortened; late completions are real
// completions held back. Everything above it (retries, resubmission of
// short I/O, error delivery) is the scheduler's real code.
type faultQueue struct {
	inner    queue
	inj      FaultInjector
	slots    []faultSlot
	held     []uint32 // slots whose completion is injected or delayed
	wakeSlot uint32
}

type faultSlot struct {
	active bool      // in held
	synth  bool      // never sent to the kernel: res is the result
	got    bool      // the kernel's completion arrived (held back)
	res    int32     // the result to report
	due    time.Time // not reported before
}

func newFaultQueue(inner queue, slots int, inj FaultInjector) *faultQueue {
	return &faultQueue{inner: inner, inj: inj, slots: make([]faultSlot, slots), wakeSlot: ^uint32(0)}
}

func (q *faultQueue) prepare(r *request, slot uint32) bool {
	sc := r.sysCall(PathQueue)
	a := sc.attempt()
	f := q.inj.Fault(a)
	fs := &q.slots[slot]
	*fs = faultSlot{}
	if f.Delay > 0 {
		fs.due = time.Now().Add(f.Delay)
	}
	switch {
	case f.Errno != 0:
		fs.synth, fs.res = true, -int32(f.Errno)
	case f.Drop && (r.op == OpFsync || r.op == OpFdatasync):
		fs.synth = true
	}
	if fs.synth || f.Delay > 0 {
		fs.active = true
		q.held = append(q.held, slot)
	}
	if fs.synth {
		return false
	}
	if (r.op == OpRead || r.op == OpWrite) && f.Short > 0 && f.Short < a.Len {
		full := r.buf
		r.buf = r.buf[:r.done+f.Short]
		fixed := q.inner.prepare(r, slot)
		r.buf = full
		return fixed
	}
	return q.inner.prepare(r, slot)
}

func (q *faultQueue) armWake(efd int, slot uint32) {
	q.wakeSlot = slot
	q.inner.armWake(efd, slot)
}

func (q *faultQueue) enter(wait bool, timeout time.Duration) error {
	if !wait || len(q.held) == 0 {
		return q.inner.enter(wait, timeout)
	}
	// Completions of ours are pending: the kernel cannot wake the loop
	// for them, so submit without sleeping there and nap briefly here.
	if err := q.inner.enter(false, -1); err != nil {
		return err
	}
	nap := 200 * time.Microsecond
	if timeout >= 0 {
		nap = min(nap, timeout)
	}
	for _, slot := range q.held {
		if d := time.Until(q.slots[slot].due); d < nap {
			nap = d
		}
	}
	if nap > 0 {
		time.Sleep(nap)
	}
	return nil
}

func (q *faultQueue) reap(dst []completion) (int, error) {
	n, err := q.inner.reap(dst)
	if err != nil {
		return n, err
	}
	// Hold back kernel completions whose attempt is delayed.
	kept := 0
	for _, c := range dst[:n] {
		if c.slot != q.wakeSlot && q.slots[c.slot].active {
			fs := &q.slots[c.slot]
			fs.got, fs.res = true, c.res
			continue
		}
		dst[kept] = c
		kept++
	}
	// Report what is due.
	now := time.Now()
	held := q.held[:0]
	for _, slot := range q.held {
		fs := &q.slots[slot]
		if kept < len(dst) && (fs.synth || fs.got) && !now.Before(fs.due) {
			dst[kept] = completion{slot: slot, res: fs.res}
			kept++
			fs.active = false
			continue
		}
		held = append(held, slot)
	}
	q.held = held
	return kept, nil
}

func (q *faultQueue) registerFile(f *File) error   { return q.inner.registerFile(f) }
func (q *faultQueue) unregisterFile(f *File) error { return q.inner.unregisterFile(f) }
func (q *faultQueue) close() error                 { return q.inner.close() }

// faultCaller sits between a caller's goroutine and its system calls
// (sysCaller) and applies a FaultInjector's faults, as faultQueue does
// between the loop and the kernel queue: an injected errno and a dropped
// flush never reach the kernel, a short transfer does, shortened, and a
// delay holds the caller after the call. What the caller does with the
// result (retries, continuing a short transfer, the error it returns) is
// its real code.
type faultCaller struct {
	inner sysCaller
	inj   FaultInjector
}

func (fc *faultCaller) call(c sysCall) (int, error) {
	f := fc.inj.Fault(c.attempt())
	var n int
	var err error
	switch {
	case f.Errno != 0:
		err = f.Errno
	case f.Drop && (c.op() == OpFsync || c.op() == OpFdatasync):
	default:
		if (c.op() == OpRead || c.op() == OpWrite) && f.Short > 0 && f.Short < len(c.buf) {
			c.buf = c.buf[:f.Short]
		}
		n, err = fc.inner.call(c)
	}
	if f.Delay > 0 {
		time.Sleep(f.Delay)
	}
	return n, err
}
