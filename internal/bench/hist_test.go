package bench_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/diskio-go/diskio/internal/bench"
)

func TestHistogramJSONRoundTrip(t *testing.T) {
	var h bench.Histogram
	for _, d := range []time.Duration{10, 100 * time.Nanosecond, 3 * time.Microsecond, 2 * time.Millisecond, time.Second} {
		h.Record(d)
	}
	b, err := json.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	var g bench.Histogram
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if g.Count() != h.Count() || g.Max() != h.Max() || g.Mean() != h.Mean() || g.Quantile(0.5) != h.Quantile(0.5) {
		t.Fatalf("round trip changed the histogram: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"counts":{"99999":1},"sig_figs":2,"highest_ns":3600000000000}`), &g); err == nil {
		t.Fatal("a bucket out of range was accepted")
	}
}

func TestHistogramMerge(t *testing.T) {
	var a, b, all bench.Histogram
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i) * time.Microsecond
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	if a.Count() != all.Count() || a.Max() != all.Max() || a.Mean() != all.Mean() || a.Quantile(0.99) != all.Quantile(0.99) {
		t.Fatalf("merged: n %d max %v p99 %v; want n %d max %v p99 %v", a.Count(), a.Max(), a.Quantile(0.99), all.Count(), all.Max(), all.Quantile(0.99))
	}
}

// TestHistogramLayout pins the bucket layout, the quantile rank rule and
// the wire form to HdrHistogram's (hdrhistogram-go v1.4.0 at 2 significant
// figures from 1ns to an hour gave every value below for these durations),
// so that results stay comparable with those measured before.
func TestHistogramLayout(t *testing.T) {
	var h bench.Histogram
	for _, d := range []time.Duration{0, 255, 257, 1000, 12345, 1_000_000, 3_333_333_333, 2 * time.Hour} {
		h.Record(d)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0, 0}, {0.125, 0}, {0.25, 255}, {0.375, 257}, {0.5, 1003}, {0.625, 12351},
		{0.75, 1003519}, {0.8, 1003519}, {0.875, 3338665983}, {0.9, 3338665983}, {1, 2 * time.Hour},
	} {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %d, want %d", c.q, got, c.want)
		}
	}
	b, err := json.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"counts":{"0":1,"1780":1,"255":1,"256":1,"3270":1,"4561":1,"506":1,"960":1},"sig_figs":2,"highest_ns":3600000000000,"sum_ns":3603334347190,"max_ns":7200000000000}`
	if string(b) != want {
		t.Errorf("encoded\n%s\nwant\n%s", b, want)
	}
}
