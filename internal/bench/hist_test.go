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
	if err := json.Unmarshal([]byte(`{"buckets":{"99999":1}}`), &g); err == nil {
		t.Fatal("a bucket out of range was accepted")
	}
}
