//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/bench"
)

// The statistics against answers worked out by hand: the median's
// interval from the order statistics (binomial), and the exact
// Mann-Whitney U p-values (counting all C(n1+n2, n1) splits).
func TestStatistics(t *testing.T) {
	s := summarize([]float64{6, 2, 4, 1, 5, 3})
	require.Equal(t, 3.5, s.center)
	require.Equal(t, Interval{Lo: 1, Hi: 6, Confidence: 1 - 2.0/64}, s.ci) // [x(1), x(6)]: 1 - 2/2^6

	s = summarize([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	require.Equal(t, 5.5, s.center)
	require.Equal(t, 2.0, s.ci.Lo) // [x(2), x(9)]: 1 - 2*(1+10)/2^10
	require.Equal(t, 9.0, s.ci.Hi)
	require.InDelta(t, 1-22.0/1024, s.ci.Confidence, 1e-12)

	// Too few rounds for 95%: the whole range, at its own confidence.
	s = summarize([]float64{5, 1, 3})
	require.Equal(t, summary{center: 3, ci: Interval{Lo: 1, Hi: 5, Confidence: 0.75}}, s)
	require.Equal(t, "±67%", pct(s.ci, s.center))

	for _, c := range []struct {
		a, b []float64
		p    float64
		sig  bool
	}{
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252, true},                   // separated, 5+5
		{[]float64{1, 3, 5, 7, 9, 11}, []float64{2, 4, 6, 8, 10, 12}, 646.0 / 924, false},        // interleaved, 6+6
		{[]float64{100, 130, 90, 120, 95, 110}, []float64{105, 98, 125, 92, 115, 101}, 1, false}, // U at its mean
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 0.1, false},                                     // 3+3 can never reach 0.05
		{[]float64{7}, []float64{8}, 1, false},                                                   // one round: no test
	} {
		p, sig := compare(c.a, c.b)
		require.InDelta(t, c.p, p, 1e-9, "%v vs %v", c.a, c.b)
		require.Equal(t, c.sig, sig, "%v vs %v", c.a, c.b)
	}
}

func rowOf(label string, mbps ...float64) Result {
	var rounds []Round
	for _, v := range mbps {
		rounds = append(rounds, Round{Measures: Measures{MBPerS: v, IOPS: v * 1e6 / 4096, Ops: 10, Lat: Latency{P50: 20, Max: v}}})
	}
	r := aggregate(Result{Group: "g", Label: label, Backend: label, Goroutines: 1, BlockSize: 4096}, rounds)
	return r
}

// Ratios on made-up rounds: the medians' ratio, the test, the bounds, and
// the table's "~".
func TestRatios(t *testing.T) {
	rs := []Result{
		rowOf("uring", 110, 112, 108, 111, 109, 113),
		rowOf("aio", 100, 130, 90, 120, 95, 110),
		rowOf("os.File", 100, 101, 99, 102, 98, 100.5),
	}
	computeRatios(rs)
	u, a, o := rs[0], rs[1], rs[2]
	require.InDelta(t, 110.5/100.25, u.Ratio, 1e-12)
	require.InDelta(t, 2.0/924, u.RatioP, 1e-9)
	require.True(t, u.RatioSignificant)
	require.InDelta(t, 108.0/102, u.RatioLo, 1e-12)
	require.InDelta(t, 113.0/98, u.RatioHi, 1e-12)
	require.False(t, a.RatioSignificant)
	require.Equal(t, 1.0, o.Ratio)
	require.Zero(t, o.RatioP, "the baseline is not tested against itself")
	require.Equal(t, 113.0, u.Lat.Max, "max is the largest round's")
	require.Equal(t, int64(60), u.Ops, "ops are summed")

	var out bytes.Buffer
	printReport(&out, &Report{Rounds: 6, Results: rs})
	lines := strings.Split(out.String(), "\n")
	find := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no %q line in\n%s", prefix, out.String())
		return ""
	}
	require.Contains(t, find("uring "), "1.10x  ")
	require.NotContains(t, find("uring "), "~")
	require.Contains(t, find("aio "), "x ~")
	require.Contains(t, find("os.File "), "1.00x")
	require.NotContains(t, find("os.File "), "~")
	require.Contains(t, out.String(), "median of 6 alternating rounds")
}

// The tail figure's curve: the fraction of durations above x, down to the
// floor, on a made-up uniform distribution.
func TestExceedance(t *testing.T) {
	var h bench.Histogram
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i) * time.Microsecond / 10) // 0.1 µs .. 10 ms, uniform
	}
	pts := exceedance(&h, 1e-4)
	require.Equal(t, 1.0, pts[0].Y)
	for i := 1; i < len(pts); i++ {
		require.GreaterOrEqual(t, pts[i].X, pts[i-1].X)
		require.LessOrEqual(t, pts[i].Y, pts[i-1].Y)
	}
	for _, p := range pts {
		if p.Y >= 1e-4 && p.X > 1 {
			// P(X > x) of uniform(0, 10 ms] is 1 - x/10ms, within the buckets' 1%.
			require.InDelta(t, 1-p.X/1e4, p.Y, 0.011, "at %v µs", p.X)
		}
	}
	require.Less(t, pts[len(pts)-1].Y, 1e-4, "the curve leaves the panel at the floor")
}

// A row's thread column is the median of its rounds' peaks, with io_uring's
// workers among them (they were dropped between the rounds and the row).
func TestThreadsCellCarriesWorkers(t *testing.T) {
	r := aggregate(Result{Group: "g", Label: "uring", Backend: "uring"}, []Round{
		{Measures: Measures{ThreadsPeak: 11, WorkersPeak: 4}}, {Measures: Measures{ThreadsPeak: 12, WorkersPeak: 4}},
		{Measures: Measures{ThreadsPeak: 10, WorkersPeak: 3}},
	})
	require.Equal(t, "11 (4 iou-wrk)", threadsCell(r))
	r = aggregate(Result{Group: "g", Label: "aio", Backend: "aio"}, []Round{{Measures: Measures{ThreadsPeak: 6}}, {Measures: Measures{ThreadsPeak: 5}}})
	require.Equal(t, "6", threadsCell(r))
}
