//go:build linux

package trace

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/diskio-go/diskio/sched"
)

// The totals count every request and system call in place, so that the
// summary and the system-call profile cover the whole run in fixed memory,
// whatever the ring still holds.

// Request totals are kept per op (16) and size class (0, then powers of
// two up to 2^32: 34).
const (
	numOpCodes  = 16
	numSizeCode = 34
	// totalBuckets is the latency histogram's length: log-linear buckets
	// (see histogram) up to 2^40ns (18 minutes); longer waits count in
	// the last.
	totalBuckets = (40-subBits+1)*subBuckets + subBuckets
)

// Totals are split in shards, picked by the record's ticket, so that
// writers on different CPUs mostly add to different cache lines: with one
// shard, two goroutines recording requests of the same op and size
// contend for one line (BenchmarkRecord measures it).
const numShards = 4

// opTotal counts the requests of one op and size class.
type opTotal [numShards]opShard

type opShard struct {
	inline, errors, bytes atomic.Uint64
	sum, max              atomic.Int64
	queue, kernel, wake   atomic.Int64 // sums over requests through the loop
	counts                [totalBuckets]atomic.Uint64
}

// callTotal counts the system calls of one kind that slept or did not.
type callTotal struct {
	n, time, submitted, reaped atomic.Uint64
	_                          [32]byte // one cache line each
}

const numCallCodes = 64 // sched.Syscall values kept in 6 bits

type totals struct {
	ops   [numOpCodes * numSizeCode]atomic.Pointer[opTotal] // allocated on first use
	calls [numShards][numCallCodes][2]callTotal
	// backends has bit backendCode(b) set for each backend seen.
	backends atomic.Uint32
}

func sizeCode(n int) int {
	if n <= 0 {
		return 0
	}
	return min(bits.Len(uint(n-1))+1, numSizeCode-1) // 1: 1 byte, 2: 2, 3: 3-4, ...
}

func sizeOfCode(c int) int {
	if c == 0 {
		return 0
	}
	return 1 << (c - 1)
}

func (t *totals) op(op sched.Op, n int) *opTotal {
	p := &t.ops[int(op&15)*numSizeCode+sizeCode(n)]
	if o := p.Load(); o != nil {
		return o
	}
	// The first request of this op and size: the only allocation.
	o := new(opTotal)
	if !p.CompareAndSwap(nil, o) {
		o = p.Load()
	}
	return o
}

func (t *totals) request(ev *sched.RequestEvent, ticket uint64) {
	o := &t.op(ev.Op, ev.Len)[ticket%numShards]
	lat := ev.Resume - ev.Enqueue
	o.counts[min(bucketOf(lat), totalBuckets-1)].Add(1)
	o.sum.Add(lat)
	if lat > o.max.Load() {
		for {
			m := o.max.Load()
			if lat <= m || o.max.CompareAndSwap(m, lat) {
				break
			}
		}
	}
	if ev.N > 0 {
		o.bytes.Add(uint64(ev.N))
	}
	if ev.Err != nil {
		o.errors.Add(1)
	}
	if ev.Inline {
		o.inline.Add(1)
	} else {
		o.queue.Add(ev.Submit - ev.Enqueue)
		o.kernel.Add(ev.Complete - ev.Submit)
		o.wake.Add(ev.Resume - ev.Complete)
	}
	if b := uint32(1) << backendCode(ev.Backend); t.backends.Load()&b == 0 {
		t.backends.Or(b)
	}
}

func (t *totals) syscall(ev *sched.SyscallEvent, ticket uint64) {
	w := 0
	if ev.Wait {
		w = 1
	}
	c := &t.calls[ticket%numShards][ev.Call&(numCallCodes-1)][w]
	c.n.Add(1)
	c.time.Add(uint64(max(ev.End-ev.Start, 0)))
	if ev.Submitted > 0 {
		c.submitted.Add(uint64(ev.Submitted))
	}
	if ev.Reaped > 0 {
		c.reaped.Add(uint64(ev.Reaped))
	}
}

// OpTotal is what a Snapshot counted of one op and size class: every
// request recorded in its span, whether or not the ring still holds it.
type OpTotal struct {
	Op sched.Op
	// Size is the size class: requests of more than Size/2 and at most
	// Size bytes (0: requests without data, such as fsync).
	Size           int
	Count          uint64
	Errors, Inline uint64
	Bytes          uint64 // transferred
	// Queue, Kernel and Wake are summed over the requests that went
	// through the scheduler loop (Count - Inline); see Request.
	Queue, Kernel, Wake time.Duration
	latency             histogram
}

// Latency returns the q-quantile (0 to 1) of the requests' latency, enqueue
// to resume, within 6%.
func (o *OpTotal) Latency(q float64) time.Duration { return o.latency.quantile(q) }

// Max is the longest latency; in a snapshot since a Mark, the longest
// since the recorder started (a maximum cannot be subtracted).
func (o *OpTotal) Max() time.Duration { return time.Duration(o.latency.max) }

// Mean is the mean latency.
func (o *OpTotal) Mean() time.Duration { return o.latency.mean() }

// CallTotal is what a Snapshot counted of one system call: every call
// recorded in its span.
type CallTotal struct {
	Call              sched.Syscall
	Wait              bool // the calls that slept until a completion
	Count             uint64
	Time              time.Duration
	Submitted, Reaped uint64
}

// aggregate is a copy of the totals, which a Mark keeps to subtract.
type aggregate struct {
	ops      map[int]*OpTotal
	calls    [numCallCodes][2]CallTotal
	backends uint32
}

func (t *totals) load() *aggregate {
	a := &aggregate{ops: map[int]*OpTotal{}, backends: t.backends.Load()}
	for i := range t.ops {
		o := t.ops[i].Load()
		if o == nil {
			continue
		}
		ot := &OpTotal{Op: sched.Op(i / numSizeCode), Size: sizeOfCode(i % numSizeCode)}
		h := &ot.latency
		for k := range o {
			sh := &o[k]
			ot.Errors += sh.errors.Load()
			ot.Inline += sh.inline.Load()
			ot.Bytes += sh.bytes.Load()
			ot.Queue += time.Duration(sh.queue.Load())
			ot.Kernel += time.Duration(sh.kernel.Load())
			ot.Wake += time.Duration(sh.wake.Load())
			for j := range sh.counts {
				c := sh.counts[j].Load()
				h.counts[j] += c
				h.n += c
			}
			h.sum += sh.sum.Load()
			h.max = max(h.max, sh.max.Load())
		}
		ot.Count = h.n
		a.ops[i] = ot
	}
	for k := range t.calls {
		for c := range t.calls[k] {
			for w := range 2 {
				ct := &t.calls[k][c][w]
				x := &a.calls[c][w]
				x.Call, x.Wait = sched.Syscall(c), w == 1
				x.Count += ct.n.Load()
				x.Time += time.Duration(ct.time.Load())
				x.Submitted += ct.submitted.Load()
				x.Reaped += ct.reaped.Load()
			}
		}
	}
	return a
}

// sub removes base's counts from a (both from load; base earlier). The
// maximum cannot be subtracted: it stays the whole run's.
func (a *aggregate) sub(base *aggregate) {
	for i, o := range a.ops {
		b := base.ops[i]
		if b == nil {
			continue
		}
		o.Errors -= b.Errors
		o.Inline -= b.Inline
		o.Bytes -= b.Bytes
		o.Queue -= b.Queue
		o.Kernel -= b.Kernel
		o.Wake -= b.Wake
		h := &o.latency
		for j := range h.counts {
			h.counts[j] -= b.latency.counts[j]
		}
		h.n -= b.latency.n
		h.sum -= b.latency.sum
		o.Count = h.n
		if o.Count == 0 {
			delete(a.ops, i)
		}
	}
	for c := range a.calls {
		for w := range 2 {
			x, y := &a.calls[c][w], &base.calls[c][w]
			x.Count -= y.Count
			x.Time -= y.Time
			x.Submitted -= y.Submitted
			x.Reaped -= y.Reaped
		}
	}
}
