//go:build linux

package sched

import (
	"math/bits"
	"strconv"
	"sync/atomic"
	"time"
)

// Statistics: every scheduler counts, always, the requests it carries and
// how long they took, by operation and class. Recording is a handful of
// atomic adds on counters only the loop writes (callers write them only
// for requests they run themselves: the idle fast path, the blocking
// backend), and allocates nothing; the clock is read once per caller
// (at enqueue) and once per batch on the loop. Stats and ReadStats take a
// snapshot at any time, from any goroutine.

// numOps is the number of request operations (OpNop to OpUnlink).
const numOps = int(OpUnlink) + 1

// HistogramBuckets is the number of buckets of a Histogram.
const HistogramBuckets = (maxExp-histSubBits+1)*histSub + histSub

const (
	histSubBits = 3
	histSub     = 1 << histSubBits // linear buckets per power of two
	maxExp      = 39               // durations from 2^40 ns (18 minutes) on share the last bucket
)

// Histogram is a distribution of durations in log-linear buckets, as HDR
// histograms keep them: every power of two of nanoseconds is split into 8
// equal buckets, so a quantile is known within 12.5%, from 1ns to 18
// minutes (longer durations count in the last bucket) in a fixed 304
// counters.
type Histogram struct {
	Counts [HistogramBuckets]uint64
	Sum    time.Duration // of every duration recorded
}

// histBucket is the bucket of d nanoseconds.
func histBucket(d int64) int {
	if d < histSub {
		return int(max(d, 0))
	}
	e := bits.Len64(uint64(d)) - 1 // d in [2^e, 2^(e+1))
	if e > maxExp {
		return HistogramBuckets - 1
	}
	return (e-histSubBits+1)*histSub + int(uint64(d)>>(e-histSubBits)) - histSub
}

// BucketTop returns the largest duration bucket i holds.
func BucketTop(i int) time.Duration {
	if i < histSub {
		return time.Duration(i)
	}
	e := i/histSub + histSubBits - 1
	lo := int64(histSub+i%histSub) << (e - histSubBits)
	return time.Duration(lo + int64(1)<<(e-histSubBits) - 1)
}

// Count is the number of durations recorded.
func (h *Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Mean is the mean duration, 0 when none was recorded.
func (h *Histogram) Mean() time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	return h.Sum / time.Duration(n)
}

// Quantile returns the duration at or below which fraction q of the
// recorded durations lie: the top of the bucket the rank falls in (so at
// most 12.5% above the true value), 0 when none was recorded.
// Quantile(1) is the top of the longest duration's bucket.
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	rank := uint64(q*float64(n) + 0.5)
	rank = min(max(rank, 1), n)
	var seen uint64
	for i, c := range h.Counts {
		if seen += c; seen >= rank {
			return BucketTop(i)
		}
	}
	return BucketTop(HistogramBuckets - 1)
}

// Merge adds o's durations to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.Sum += o.Sum
}

// histRec is the recording side of a Histogram.
type histRec struct {
	counts [HistogramBuckets]atomic.Uint64
	sum    atomic.Int64
}

func (h *histRec) record(d int64) {
	h.counts[histBucket(d)].Add(1)
	h.sum.Add(d)
}

func (h *histRec) load(dst *Histogram) {
	for i := range h.counts {
		dst.Counts[i] = h.counts[i].Load()
	}
	dst.Sum = time.Duration(h.sum.Load())
}

// OpStats counts the requests of one operation and class.
type OpStats struct {
	Bytes  uint64 // transferred by reads and writes
	Errors uint64 // requests that failed
	// Queue is the time from the caller's hand-over to the first
	// submission to the kernel: waiting for the loop, for a free slot,
	// or for the background bound. Zero for requests run by their
	// caller.
	Queue Histogram
	// Device is the time from the first submission to the final
	// completion (resubmissions of short transfers included): the
	// kernel's and the device's time, as the loop sees it.
	Device Histogram
}

// Requests is the number of completed requests.
func (o *OpStats) Requests() uint64 { return o.Device.Count() }

type opRec struct {
	bytes, errors atomic.Uint64
	queue, device histRec
}

// Stats is a snapshot of a scheduler's statistics (Scheduler.Stats). The
// counters grow from the scheduler's start; take two snapshots and
// subtract for rates. Its String method is JSON in expvar's manner, with
// percentiles instead of buckets.
type Stats struct {
	Backend Backend
	// Ops counts completed requests by operation (OpNop to OpUnlink)
	// and class.
	Ops [numOps][NumClasses]OpStats
	// InFlight is the number of requests in the kernel now, by class:
	// those the loop submitted and those running on their callers'
	// threads (Inline).
	InFlight [NumClasses]int
	// Queued is the number of requests the loop holds, waiting for a
	// free slot or for the background bound.
	Queued int
	// Inline counts requests their caller ran itself with a system call:
	// the idle fast path, latency-class syncs, on io_uring what the ring
	// would hand to a worker (syncs, fallocate, unlink, classified writes
	// that would block), the blocking backend, and NOP, fallocate and
	// unlink on Linux AIO. They are in Ops too.
	Inline uint64
	// Enters counts the loop's system calls into the kernel queue
	// (io_uring_enter, or io_submit and io_getevents), and Sleeps those
	// of them that waited for a completion.
	Enters, Sleeps uint64
	// Slow reports requests in flight longer than Options.SlowThreshold.
	Slow SlowStats
	// BackgroundBound is how many background requests may be in flight
	// while latency-class requests wait (see ClassOptions); 0 when
	// classes are off.
	BackgroundBound int
	// Places counts the caller slots, where requests run on their callers'
	// threads, and how many are in use now (health_linux.go).
	Places PlaceStats
	// Fallbacks counts the files reported to run buffered although
	// they asked for O_DIRECT (File.ReportBuffered).
	Fallbacks uint64
	// Buffers is what the buffer cache (AllocBuffer) holds and took.
	Buffers BufferStats
}

// BufferStats says what a scheduler's buffer cache holds and has taken.
type BufferStats struct {
	// Allocs counts the AllocBuffer calls the cache could not serve (a
	// new arena block, or a mapping when the arena is full): none in
	// steady state.
	Allocs uint64
	// Cached is the memory the cache holds for reuse, in bytes.
	Cached int
	// Arena is the size of the registered arena while it is mapped: 0
	// without one, and once the scheduler is closed and every block of
	// it has been given back.
	Arena int
}

// SlowStats counts slow requests (Options.SlowThreshold).
type SlowStats struct {
	Threshold time.Duration // 0: detection off
	Requests  uint64        // requests that were in flight longer than Threshold
	Reports   uint64        // reports made (a request still waiting is reported again at each doubling)
	Dropped   uint64        // reports not delivered: the callback was still busy with earlier ones
	Stalled   int           // requests in flight longer than Threshold now
	// Longest is the longest time a request had been in flight when it
	// was last reported (a stall still going on is longer).
	Longest time.Duration
	// Oldest is how long the oldest of the Stalled requests has been in
	// flight now; 0 when none is.
	Oldest time.Duration
	// Doublings counts requests by how long they were in flight:
	// Doublings[i] those reported at Threshold<<i (Doublings[0] is
	// Requests).
	Doublings [SlowDoublings]uint64
}

// stats is a scheduler's recording side.
type stats struct {
	ops      [numOps][NumClasses]opRec
	inline   atomic.Uint64
	onCaller [NumClasses]atomic.Int64 // requests running on their callers now

	// Written by the loop only.
	enters, sleeps atomic.Uint64
	inflight       [NumClasses]atomic.Int64
	queued         atomic.Int64
	bound          atomic.Int64

	slowReports, slowDropped atomic.Uint64
	stalled                  atomic.Int64
	longest                  atomic.Int64
	// slowDoublings[i]: requests reported at Threshold<<i; [0] counts
	// every slow request.
	slowDoublings [SlowDoublings]atomic.Uint64
	// stallSince is the first submission (Now) of the oldest request
	// the loop holds that was reported slow; 0: none (health_linux.go).
	stallSince atomic.Int64
	fallbacks  atomic.Uint64
}

// done records a request that completed, with its caller's enqueue, its
// first submission and its completion times (Now values).
func (st *stats) done(r *request, enqueue, submit, complete int64) {
	o := &st.ops[r.op][r.class%NumClasses]
	if r.op == OpRead || r.op == OpWrite {
		o.bytes.Add(uint64(r.done))
	}
	if r.err != nil {
		o.errors.Add(1)
	}
	o.queue.record(submit - enqueue)
	o.device.record(complete - submit)
}

// ReadStats fills dst with a snapshot of s's statistics, allocating
// nothing. Counters are read one by one while requests go on, so a
// snapshot taken under load may be a few requests apart between fields.
func (s *Scheduler) ReadStats(dst *Stats) {
	st := &s.stats
	dst.Backend = s.backend
	for op := range st.ops {
		for c := range st.ops[op] {
			r, o := &st.ops[op][c], &dst.Ops[op][c]
			o.Bytes, o.Errors = r.bytes.Load(), r.errors.Load()
			r.queue.load(&o.Queue)
			r.device.load(&o.Device)
		}
	}
	for c := range dst.InFlight {
		dst.InFlight[c] = int(st.inflight[c].Load() + st.onCaller[c].Load())
	}
	dst.Queued = int(st.queued.Load())
	dst.Inline = st.inline.Load()
	dst.Enters, dst.Sleeps = st.enters.Load(), st.sleeps.Load()
	dst.BackgroundBound = int(st.bound.Load())
	dst.Slow = SlowStats{
		Threshold: s.slowThreshold,
		Requests:  st.slowDoublings[0].Load(),
		Reports:   st.slowReports.Load(),
		Dropped:   st.slowDropped.Load(),
		Stalled:   int(st.stalled.Load()),
		Longest:   time.Duration(st.longest.Load()),
	}
	s.readHealth(dst)
	s.readBuffers(&dst.Buffers)
}

// Stats returns a snapshot of s's statistics (see ReadStats).
func (s *Scheduler) Stats() *Stats {
	st := new(Stats)
	s.ReadStats(st)
	return st
}

// StatsVar returns an expvar.Var for s: its String method takes a
// snapshot and returns it as JSON (Stats.String). Publish it with
// expvar.Publish("diskio", s.StatsVar()). (sched does not import expvar,
// which would register its HTTP handler in every program.)
func (s *Scheduler) StatsVar() interface{ String() string } { return statsVar{s} }

type statsVar struct{ s *Scheduler }

func (v statsVar) String() string { return v.s.Stats().String() }

// Total returns the counters of one operation summed over the classes.
func (st *Stats) Total(op Op) OpStats {
	var t OpStats
	for c := range st.Ops[op] {
		o := &st.Ops[op][c]
		t.Bytes += o.Bytes
		t.Errors += o.Errors
		t.Queue.Merge(&o.Queue)
		t.Device.Merge(&o.Device)
	}
	return t
}

// String returns st as JSON: the gauges and counters, and for every
// operation and class that completed requests, their count, bytes,
// errors, and the mean, p50, p90, p99, p99.9 and largest bucket of their
// queue and device times in microseconds.
func (st *Stats) String() string {
	b := make([]byte, 0, 1024)
	b = append(b, `{"backend":`...)
	b = strconv.AppendQuote(b, string(st.Backend))
	b = append(b, `,"in_flight":{`...)
	for c := range st.InFlight {
		if c > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, Class(c).String())
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(st.InFlight[c]), 10)
	}
	b = append(b, `},"queued":`...)
	b = strconv.AppendInt(b, int64(st.Queued), 10)
	b = append(b, `,"inline":`...)
	b = strconv.AppendUint(b, st.Inline, 10)
	b = append(b, `,"enters":`...)
	b = strconv.AppendUint(b, st.Enters, 10)
	b = append(b, `,"sleeps":`...)
	b = strconv.AppendUint(b, st.Sleeps, 10)
	b = append(b, `,"background_bound":`...)
	b = strconv.AppendInt(b, int64(st.BackgroundBound), 10)
	b = append(b, `,"slow":{"threshold_us":`...)
	b = appendMicros(b, st.Slow.Threshold)
	b = append(b, `,"requests":`...)
	b = strconv.AppendUint(b, st.Slow.Requests, 10)
	b = append(b, `,"reports":`...)
	b = strconv.AppendUint(b, st.Slow.Reports, 10)
	b = append(b, `,"dropped":`...)
	b = strconv.AppendUint(b, st.Slow.Dropped, 10)
	b = append(b, `,"stalled":`...)
	b = strconv.AppendInt(b, int64(st.Slow.Stalled), 10)
	b = append(b, `,"longest_us":`...)
	b = appendMicros(b, st.Slow.Longest)
	b = append(b, `},"ops":[`...)
	first := true
	for op := range st.Ops {
		for c := range st.Ops[op] {
			o := &st.Ops[op][c]
			n := o.Requests()
			if n == 0 {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, `{"op":`...)
			b = strconv.AppendQuote(b, Op(op).String())
			b = append(b, `,"class":`...)
			b = strconv.AppendQuote(b, Class(c).String())
			b = append(b, `,"requests":`...)
			b = strconv.AppendUint(b, n, 10)
			b = append(b, `,"bytes":`...)
			b = strconv.AppendUint(b, o.Bytes, 10)
			b = append(b, `,"errors":`...)
			b = strconv.AppendUint(b, o.Errors, 10)
			b = append(b, `,"queue_us":`...)
			b = appendHist(b, &o.Queue)
			b = append(b, `,"device_us":`...)
			b = appendHist(b, &o.Device)
			b = append(b, '}')
		}
	}
	b = append(b, "]}"...)
	return string(b)
}

func appendMicros(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, float64(d)/float64(time.Microsecond), 'f', -1, 64)
}

func appendHist(b []byte, h *Histogram) []byte {
	b = append(b, `{"mean":`...)
	b = appendMicros(b, h.Mean())
	for _, q := range [...]struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}, {"max", 1}} {
		b = append(b, ",\""...)
		b = append(b, q.name...)
		b = append(b, "\":"...)
		b = appendMicros(b, h.Quantile(q.q))
	}
	return append(b, '}')
}
