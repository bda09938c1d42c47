package bench

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"sync"
	"time"
)

// The histogram keeps HdrHistogram's bucket layout at 2 significant
// figures (lowest value 1ns, highest an hour): every duration from 1ns to
// an hour is kept to within 1%, finer than any disk's run-to-run noise.
// Values below 256ns have a bucket each; above, every power of two is
// split into 128 equal buckets. The layout, the quantile rank rule and the
// wire form are HdrHistogram's (github.com/HdrHistogram/hdrhistogram-go
// v1.4.0, which this replaced), so quantiles and encoded histograms are the
// same as that library's, without its module in diskio's graph.
// Recording is a bucket count under a mutex, far below the cost of the
// I/O it times (go test -bench Record -cpu 1,2;
// docs/notes/2026-11-28-design-figures.md).
const (
	highest = int64(time.Hour) // longer durations are recorded as an hour
	sigFigs = 2

	subHalfBits = 7                      // log2 of the buckets per power of two
	subHalf     = 1 << subHalfBits       // 128
	subMask     = 2*subHalf - 1          // values up to this have a bucket each
	powers      = 35                     // powers of two from 256ns up to past an hour
	numBuckets  = (powers + 1) * subHalf // 4608
)

// bucketOf is the index of the bucket holding v (0 <= v <= highest).
func bucketOf(v int64) int {
	e := bits.Len64(uint64(v)|subMask) - (subHalfBits + 1) // the power of two: 0 below 256
	return e<<subHalfBits + int(v>>e)
}

// bucketRange returns the smallest and largest values bucket i holds.
func bucketRange(i int) (lo, hi int64) {
	if i < 2*subHalf {
		return int64(i), int64(i)
	}
	e := i>>subHalfBits - 1
	lo = int64(i&(subHalf-1)+subHalf) << e
	return lo, lo + 1<<e - 1
}

// Histogram records durations. It is safe for concurrent use (one mutex:
// recording holds it for a few loads and stores, against operations that
// take microseconds) and
// keeps the exact maximum and mean beside the buckets. The zero value is
// ready to use.
type Histogram struct {
	mu     sync.Mutex
	counts []int64 // numBuckets, nil until the first duration
	n      int64
	sum    int64 // nanoseconds, exact
	max    int64 // exact
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	v := min(max(int64(d), 0), highest)
	h.mu.Lock()
	if h.counts == nil {
		h.counts = make([]int64, numBuckets)
	}
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += v
	h.max = max(h.max, int64(d))
	h.mu.Unlock()
}

// Merge adds the durations o recorded to h (the testbench merges a row's
// rounds).
func (h *Histogram) Merge(o *Histogram) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts == nil {
		h.counts = make([]int64, numBuckets)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Count is the number of durations recorded.
func (h *Histogram) Count() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return uint64(h.n)
}

// Max is the largest duration recorded, exactly.
func (h *Histogram) Max() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Duration(h.max)
}

// Mean is the exact mean of the durations recorded.
func (h *Histogram) Mean() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}

// Quantile returns the duration below which a fraction q (0..1) of the
// recorded durations lie: the upper edge of the bucket holding that rank,
// never more than Max (which q = 1 returns). It returns 0 for an empty
// histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		return 0
	}
	if q >= 1 {
		return time.Duration(h.max)
	}
	// HdrHistogram's rank: the percentile's share of the count, rounded
	// half up, at least 1. The arithmetic goes through the percentile as
	// that library's does, so that ranks (and so quantiles) match it to
	// the last floating-point rounding.
	p := max(q*100, 0)
	rank := int64(1)
	if r := p/100*float64(h.n) + 0.5; r >= float64(h.n) {
		rank = h.n
	} else if r >= 1 {
		rank = int64(r)
	}
	var seen int64
	for i, c := range h.counts {
		if seen += c; seen >= rank {
			lo, hi := bucketRange(i)
			if p == 0 {
				hi = lo
			}
			return min(time.Duration(hi), time.Duration(h.max))
		}
	}
	return time.Duration(h.max) // unreachable: the counts add up to n
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
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		return nil
	}
	var pts []CDFPoint
	var seen int64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		_, hi := bucketRange(i)
		pts = append(pts, CDFPoint{D: min(time.Duration(hi), time.Duration(h.max)), Frac: float64(seen) / float64(h.n)})
	}
	return pts
}

// histogramJSON is a Histogram's wire form: the non-empty counts by
// bucket index (HdrHistogram's counts indices at this layout).
type histogramJSON struct {
	Counts  map[int]int64 `json:"counts"`
	SigFigs int64         `json:"sig_figs"`
	Highest int64         `json:"highest_ns"`
	Sum     int64         `json:"sum_ns"`
	Max     int64         `json:"max_ns"`
}

// MarshalJSON encodes the histogram, so that a run in another process can
// hand it back (the testbench runs each measurement in a child process).
func (h *Histogram) MarshalJSON() ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := histogramJSON{Counts: map[int]int64{}, SigFigs: sigFigs, Highest: highest, Sum: h.sum, Max: h.max}
	for i, c := range h.counts {
		if c != 0 {
			v.Counts[i] = c
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
	if v.SigFigs != sigFigs || v.Highest != highest {
		return fmt.Errorf("bench: histogram of %d significant figures up to %dns, want %d up to %d", v.SigFigs, v.Highest, sigFigs, highest)
	}
	counts := make([]int64, numBuckets)
	var n int64
	for i, c := range v.Counts {
		if i < 0 || i >= numBuckets || c < 0 {
			return fmt.Errorf("bench: histogram bucket %d (count %d) out of range", i, c)
		}
		counts[i] = c
		n += c
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts, h.n, h.sum, h.max = counts, n, v.Sum, v.Max
	return nil
}
