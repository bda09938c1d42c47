package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// subBits sub-buckets per power of two: values are kept to within
// 1/2^subBits (1.6%), which is finer than the run-to-run noise of any disk.
const (
	subBits    = 6
	subCount   = 1 << subBits
	maxExp     = 40 // 2^40 ns = 18 minutes; longer latencies land in the last bucket
	numBuckets = (maxExp + 1) * subCount
)

// Histogram records durations in log-linear buckets (HDR-style): exact
// below 64ns, then 64 buckets per power of two. It is safe for concurrent
// use; Record is a few atomic adds, so thousands of goroutines can share one
// without a per-goroutine copy (a 4 KiB read arrives every ~7µs at most on
// a fast disk, so the shared cache lines are not contended). The zero
// value is ready to use.
type Histogram struct {
	counts [numBuckets]atomic.Uint64
	n      atomic.Uint64
	sum    atomic.Uint64 // nanoseconds
	max    atomic.Int64
}

func bucketOf(v int64) int {
	if v < subCount {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - subBits - 1 // v>>e is in [subCount, 2*subCount)
	if e > maxExp-1 {
		return numBuckets - 1
	}
	return (e+1)*subCount + int(v>>e) - subCount
}

// bucketTop is the largest value that falls in bucket i.
func bucketTop(i int) int64 {
	if i < subCount {
		return int64(i)
	}
	e := i/subCount - 1
	m := int64(i%subCount + subCount)
	return (m+1)<<e - 1
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	h.counts[bucketOf(v)].Add(1)
	h.n.Add(1)
	h.sum.Add(uint64(max(v, 0)))
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

// Merge adds the durations o recorded to h (the testbench merges a row's
// rounds). o must not be recording meanwhile.
func (h *Histogram) Merge(o *Histogram) {
	for i := range o.counts {
		if c := o.counts[i].Load(); c != 0 {
			h.counts[i].Add(c)
		}
	}
	h.n.Add(o.n.Load())
	h.sum.Add(o.sum.Load())
	v := o.max.Load()
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

// Count is the number of durations recorded.
func (h *Histogram) Count() uint64 { return h.n.Load() }

// Max is the largest duration recorded, exactly.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max.Load()) }

// Mean is the exact mean of the durations recorded.
func (h *Histogram) Mean() time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	return time.Duration(h.sum.Load() / n)
}

// Quantile returns the duration below which a fraction q (0..1) of the
// recorded durations lie: the upper edge of the bucket holding that rank,
// never more than Max. It returns 0 for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var seen uint64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			return min(time.Duration(bucketTop(i)), h.Max())
		}
	}
	return h.Max()
}

// CDFPoint is one step of a cumulative distribution: a fraction Frac of the
// recorded durations are at most D.
type CDFPoint struct {
	D    time.Duration
	Frac float64
}

// CDF returns the cumulative distribution, one point per non-empty bucket,
// in increasing order of duration (for plotting).
func (h *Histogram) CDF() []CDFPoint {
	n := h.n.Load()
	if n == 0 {
		return nil
	}
	var pts []CDFPoint
	var seen uint64
	for i := range h.counts {
		c := h.counts[i].Load()
		if c == 0 {
			continue
		}
		seen += c
		pts = append(pts, CDFPoint{D: min(time.Duration(bucketTop(i)), h.Max()), Frac: float64(seen) / float64(n)})
	}
	return pts
}

// histogramJSON is a Histogram's wire form: the non-empty buckets only.
type histogramJSON struct {
	Buckets map[int]uint64 `json:"buckets"`
	N       uint64         `json:"n"`
	Sum     uint64         `json:"sum_ns"`
	Max     int64          `json:"max_ns"`
}

// MarshalJSON encodes the histogram, so that a run in another process can
// hand it back (the testbench runs each measurement in a child process).
func (h *Histogram) MarshalJSON() ([]byte, error) {
	v := histogramJSON{Buckets: map[int]uint64{}, N: h.n.Load(), Sum: h.sum.Load(), Max: h.max.Load()}
	for i := range h.counts {
		if c := h.counts[i].Load(); c != 0 {
			v.Buckets[i] = c
		}
	}
	return json.Marshal(v)
}

// UnmarshalJSON decodes what MarshalJSON encoded into an empty histogram.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var v histogramJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	for i, c := range v.Buckets {
		if i < 0 || i >= numBuckets {
			return fmt.Errorf("bench: histogram bucket %d out of range", i)
		}
		h.counts[i].Store(c)
	}
	h.n.Store(v.N)
	h.sum.Store(v.Sum)
	h.max.Store(v.Max)
	return nil
}
