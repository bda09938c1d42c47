//go:build linux

package sched

// Batch gathers calls that reach the scheduler, and so the kernel,
// together: Submit hands all of them over at once, so they go out in one
// submission, where the block layer can merge neighbouring reads (a
// stream of small reads becomes fewer, larger requests to the device).
// Calls started in a batch must not be waited for before Submit. A Batch
// is for one goroutine; its zero value is not usable, see
// Scheduler.Batch.
type Batch struct {
	s           *Scheduler
	first, last *request // oldest first, linked by next
	n           int
	wait        *batchWait // for WaitAll; made on first use, then reused
	class       Class
	classGiven  bool // SetClass was called
}

// Batch returns an empty Batch for s.
func (s *Scheduler) Batch() Batch { return Batch{s: s} }

// StartReadAt adds a read to the batch; see Scheduler.StartReadAt.
func (b *Batch) StartReadAt(fd int, p []byte, off int64) Call {
	return b.start(newTransfer(OpRead, nil, int32(fd), p, off))
}

// StartWriteAt adds a write to the batch; see Scheduler.StartWriteAt.
// Writes in one batch are not ordered against each other: the kernel may
// complete them in any order, so two of them must not overlap.
func (b *Batch) StartWriteAt(fd int, p []byte, off int64) Call {
	return b.start(newTransfer(OpWrite, nil, int32(fd), p, off))
}

// StartFileReadAt adds a read of f to the batch, with f's class unless
// the batch gives one (SetClass); see File.ReadAt.
func (b *Batch) StartFileReadAt(f *File, p []byte, off int64) Call {
	return b.start(newTransfer(OpRead, f, f.fd, p, off))
}

func (b *Batch) start(r *request) Call {
	if b.classGiven {
		r.class, r.classGiven = b.class, true
	}
	c, queue := b.s.admit(r)
	if queue {
		if b.wait == nil {
			b.wait = &batchWait{wake: make(chan struct{}, 1)}
			b.wait.left.Store(1)
		}
		b.wait.left.Add(1)
		r.group = b.wait
		r.detached = true // its reference goes at Submit (begin)
		if b.last == nil {
			b.first = r
		} else {
			b.last.next = r
		}
		b.last = r
		b.n++
	}
	return c
}

// Submit hands the batch's calls to the scheduler and empties the batch.
func (b *Batch) Submit() {
	if b.first == nil {
		return
	}
	// The incoming stack holds the newest first: push the chain
	// reversed, with one compare-and-swap.
	var head *request
	for r := b.first; r != nil; {
		next := r.next
		r.next = head
		head = r
		r = next
	}
	b.s.push(head, b.first, b.n)
	b.s.releaseN(b.n)
	b.first, b.last, b.n = nil, nil, 0
}

// WaitAll submits what is not submitted yet and waits until every call
// the batch started since the last WaitAll is complete, with one wake-up
// of the caller however many there are (waiting for each in turn would
// wake it once per completion). Each Call's Wait must still be called,
// and then returns at once.
func (b *Batch) WaitAll() {
	b.Submit()
	w := b.wait
	if w == nil {
		return
	}
	if w.left.Add(-1) != 0 {
		<-w.wake
	}
	// Every call is complete: no completion can touch left any more.
	w.left.Store(1)
}
