//go:build linux

package sched

// nowaitProbe is how often a classified write goes to the ring with
// RWF_NOWAIT on a descriptor whose last one came back (io_linux.go's do):
// one in nowaitProbe. The others go to their callers at once, skipping a
// round trip through the loop that would only return EAGAIN: a WAL's
// buffered appends (ext4 makes no buffered write under RWF_NOWAIT) and a
// table written front to back (each extends the file) come back every
// time, and the round trip cost the caller two waits for a P, the loop's
// and its own, on a machine busy with other goroutines. The probes find a
// descriptor whose writes the ring can make again (overwrites of a reused
// file) and keep them in the ring; one write in 256 is well beyond a 99th
// percentile.
const nowaitProbe = 256

// ReadAtClass is ReadAt with the request's class given, whatever fd's.
func (s *Scheduler) ReadAtClass(fd int, p []byte, off int64, c Class) (int, error) {
	r := newTransfer(OpRead, nil, int32(fd), p, off)
	r.giveClass(c)
	return s.do(r)
}

// WriteAtClass is WriteAt with the request's class given, whatever fd's.
func (s *Scheduler) WriteAtClass(fd int, p []byte, off int64, c Class) (int, error) {
	r := newTransfer(OpWrite, nil, int32(fd), p, off)
	r.giveClass(c)
	return s.do(r)
}

// SyncClass is Fdatasync (or, with full, Fsync) with the request's class
// given, whatever fd's.
func (s *Scheduler) SyncClass(fd int, full bool, c Class) error {
	op := OpFdatasync
	if full {
		op = OpFsync
	}
	r := newRequest(op, nil, int32(fd))
	r.giveClass(c)
	return s.doErr(r)
}

// SetClass gives the calls the batch starts from now on class c, whatever
// their descriptors'.
func (b *Batch) SetClass(c Class) { b.class, b.classGiven = c%NumClasses, true }

// classPolicy is the loop's side of ClassOptions.
type classPolicy struct {
	on        bool
	goal      int64          // ns
	hold      int64          // ns
	min, max  int            // the bound's range
	bound     int            // × 256: background requests in flight while latency work is about
	ewma      int64          // background device time under the bound, ns; 0 before the first
	samples   int            // since the bound last moved
	bgIn      int            // background requests in the kernel
	latIn     int            // latency requests in the kernel
	latQueued int            // latency requests taken from incoming, not yet submitted
	latLast   int64          // Now of the last latency completion
	callers   *callerLatency // latency requests on their callers (caller_linux.go)

	held, heldLast *request // background requests waiting for the bound, oldest first
}

func newClassPolicy(o ClassOptions, entries int) classPolicy {
	p := classPolicy{on: !o.Off, goal: int64(o.Goal), hold: int64(o.Hold), min: o.MinBackground, max: entries}
	if p.goal <= 0 {
		p.goal = int64(DefaultGoal)
	}
	if p.hold <= 0 {
		p.hold = int64(DefaultHold)
	}
	if p.min <= 0 {
		p.min = 1
	}
	p.min = min(p.min, entries)
	p.bound = min(16, entries) << 8
	p.bound = max(p.bound, p.min<<8)
	return p
}

// prios returns the ioprio of each class for the queues.
func (o ClassOptions) prios() (p [NumClasses]uint16) {
	if o.Off || o.NoIoprio {
		return p
	}
	for c, v := range o.Ioprio {
		p[c] = uint16(v)
	}
	return p
}

// latencyWaits reports whether latency work is queued, in flight (in the
// kernel or on a caller), or completed less than Hold ago (as of now).
func (p *classPolicy) latencyWaits(now int64) bool {
	if p.latIn+p.latQueued > 0 {
		return true
	}
	last := p.latLast
	if c := p.callers; c != nil {
		if c.n.Load() > 0 {
			return true
		}
		last = max(last, c.last.Load())
	}
	return last != 0 && now-last < p.hold
}

// limit is how many background requests may be in flight now.
func (p *classPolicy) limit(now int64) int {
	if !p.latencyWaits(now) {
		return p.max
	}
	return p.bound >> 8
}

// hold appends r to the background requests waiting for the bound.
func (p *classPolicy) holdBack(r *request) {
	if p.held == nil {
		p.held = r
	} else {
		p.heldLast.next = r
	}
	p.heldLast = r
}

// adapt moves the bound after a background request that went out under
// it completed in d.
func (p *classPolicy) adapt(d int64) {
	if p.ewma == 0 {
		p.ewma = d
	} else {
		p.ewma += (d - p.ewma) / 8
	}
	p.samples++
	if p.samples < max(8, p.bound>>8) {
		return
	}
	p.samples = 0
	ratio := min(max(p.goal*256/max(p.ewma, 1), 128), 512) // × 256, within 0.5x and 2x
	p.bound = int(int64(p.bound) * ratio / 256)
	p.bound = min(max(p.bound, p.min<<8), p.max<<8)
}
