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
