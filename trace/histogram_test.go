package trace

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for v := int64(0); v < 1<<20; v++ {
		i := bucketOf(v)
		if i < prev || i > prev+1 {
			t.Fatalf("bucketOf(%d) = %d after %d", v, i, prev)
		}
		if v > bucketTop(i) || (i > 0 && v <= bucketTop(i-1)) {
			t.Fatalf("%d not in bucket %d (top %d, previous top %d)", v, i, bucketTop(i), bucketTop(i-1))
		}
		prev = i
	}
	if i := bucketOf(1<<63 - 1); i >= len(histogram{}.counts) {
		t.Fatalf("max value bucket %d out of range", i)
	}
}

func TestHistogramQuantilesWithinBucketError(t *testing.T) {
	var h histogram
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]int64, 10000)
	for i := range vals {
		vals[i] = int64(rng.ExpFloat64() * 100e3)
		h.add(time.Duration(vals[i]))
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := vals[int(q*float64(len(vals)))-1]
		got := int64(h.quantile(q))
		if got < exact || float64(got) > float64(exact)*(1+1.0/subBuckets)+1 {
			t.Errorf("q%.3f: got %d, exact %d", q, got, exact)
		}
	}
	if h.quantile(1) != time.Duration(vals[len(vals)-1]) {
		t.Errorf("max: got %v want %v", h.quantile(1), vals[len(vals)-1])
	}
}
