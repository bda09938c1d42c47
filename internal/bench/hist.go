package bench

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The histogram is HdrHistogram (github.com/HdrHistogram/hdrhistogram-go)
// at 2 significant figures: every duration from 1ns to an hour is kept to
// within 1%, finer than any disk's run-to-run noise. Measured against the
// lock-free log-linear histogram it replaces (go test -bench Record
// -cpu 1,2 ./internal/bench): 10-18 ns a record under a mutex against
// 13-43 ns of contended atomics, both far below the 7-30 µs of the I/O
// they time.
const (
	highest = int64(time.Hour) // longer durations are recorded as an hour
	sigFigs = 2
)

// Histogram records durations. It is safe for concurrent use (one mutex:
// recording holds it for ~10 ns, against operations of microseconds) and
// keeps the exact maximum and mean beside HdrHistogram's buckets. The zero
// value is ready to use.
type Histogram struct {
	mu  sync.Mutex
	h   *hdr.Histogram // nil until the first duration
	sum int64          // nanoseconds, exact
	max int64          // exact
}

func newHDR() *hdr.Histogram { return hdr.New(1, highest, sigFigs) }

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	v := min(max(int64(d), 0), highest)
	h.mu.Lock()
	if h.h == nil {
		h.h = newHDR()
	}
	h.h.RecordValue(v) // in range: cannot fail
	h.sum += v
	h.max = max(h.max, int64(d))
	h.mu.Unlock()
}

// Merge adds the durations o recorded to h (the testbench merges a row's
// rounds).
func (h *Histogram) Merge(o *Histogram) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == nil {
		h.h = newHDR()
	}
	h.h.Merge(o.h)
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Count is the number of durations recorded.
func (h *Histogram) Count() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == nil {
		return 0
	}
	return uint64(h.h.TotalCount())
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
	if h.h == nil || h.h.TotalCount() == 0 {
		return 0
	}
	return time.Duration(h.sum / h.h.TotalCount())
}

// Quantile returns the duration below which a fraction q (0..1) of the
// recorded durations lie: the upper edge of the bucket holding that rank,
// never more than Max (which q = 1 returns). It returns 0 for an empty
// histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == nil || h.h.TotalCount() == 0 {
		return 0
	}
	if q >= 1 {
		return time.Duration(h.max)
	}
	return min(time.Duration(h.h.ValueAtQuantile(q*100)), time.Duration(h.max))
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
	if h.h == nil || h.h.TotalCount() == 0 {
		return nil
	}
	n := h.h.TotalCount()
	var pts []CDFPoint
	var seen int64
	for _, b := range h.h.Distribution() {
		if b.Count == 0 {
			continue
		}
		seen += b.Count
		pts = append(pts, CDFPoint{D: min(time.Duration(b.To), time.Duration(h.max)), Frac: float64(seen) / float64(n)})
	}
	return pts
}

// histogramJSON is a Histogram's wire form: HdrHistogram's non-empty
// counts by index.
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
	if h.h != nil {
		for i, c := range h.h.Export().Counts {
			if c != 0 {
				v.Counts[i] = c
			}
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
	s := newHDR().Export()
	for i, c := range v.Counts {
		if i < 0 || i >= len(s.Counts) || c < 0 {
			return fmt.Errorf("bench: histogram bucket %d (count %d) out of range", i, c)
		}
		s.Counts[i] = c
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.h, h.sum, h.max = hdr.Import(s), v.Sum, v.Max
	return nil
}
