package main

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// The statistics are benchstat's (golang.org/x/perf/benchmath, "assume
// nothing"): a row's figure is the median over its rounds, with the
// distribution-free confidence interval of the median from the order
// statistics; two rows differ when the Mann-Whitney U test on their rounds
// gives p < 0.05, and a ratio that does not is marked "~". A disk's rounds
// are not normal (a stall makes one round a third slower), so no mean or
// standard deviation is used.

const confidence = 0.95

// median is the median of vs (0 for none).
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return summarize(vs).center
}

type summary struct {
	center float64
	ci     Interval
}

// summarize is the median of vs and its interval. Where the rounds are too
// few for a 95% interval it falls back to [min, max], whose confidence for
// the median is 1 - 2^(1-n).
func summarize(vs []float64) summary {
	if len(vs) == 0 {
		return summary{}
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(vs), &benchmath.DefaultThresholds), confidence)
	out := summary{center: s.Center, ci: Interval{Lo: s.Lo, Hi: s.Hi, Confidence: s.Confidence}}
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) || math.IsNaN(s.Lo) || math.IsNaN(s.Hi) {
		out.ci = Interval{Lo: slices.Min(vs), Hi: slices.Max(vs), Confidence: 1 - math.Pow(2, float64(1-len(vs)))}
	}
	return out
}

// compare is the Mann-Whitney U test of two rows' rounds: the p-value and
// whether it rejects "no difference" at alpha 0.05.
func compare(a, b []float64) (p float64, significant bool) {
	if len(a) < 2 || len(b) < 2 {
		return 1, false
	}
	th := &benchmath.DefaultThresholds
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), th), benchmath.NewSample(slices.Clone(b), th))
	if math.IsNaN(c.P) {
		return 1, false
	}
	return c.P, c.P < c.Alpha
}

// pct is benchstat's "±x%": the larger distance from the median to an end
// of its interval, relative to the median.
func pct(s Interval, center float64) string {
	if center == 0 || s.Confidence == 0 {
		return ""
	}
	return fmt.Sprintf("±%.0f%%", max(s.Hi-center, center-s.Lo)/math.Abs(center)*100)
}

// roundOf is the measured part of a run's Result.
func roundOf(r Result, order int) Round {
	return Round{Measures: r.Measures, Order: order}
}

// aggregate makes a row of its rounds: r is the row's description (and
// any note); the measurements are the medians over rounds (the thread
// and io_uring worker peaks too), Max the largest, the counts the sums.
func aggregate(r Result, rounds []Round) Result {
	r.Rounds = rounds
	if len(rounds) == 0 {
		return r
	}
	col := func(f func(Round) float64) []float64 {
		vs := make([]float64, len(rounds))
		for i, rd := range rounds {
			vs[i] = f(rd)
		}
		return vs
	}
	iops := summarize(col(func(rd Round) float64 { return rd.IOPS }))
	mbps := summarize(col(func(rd Round) float64 { return rd.MBPerS }))
	p50 := summarize(col(func(rd Round) float64 { return rd.Lat.P50 }))
	p99 := summarize(col(func(rd Round) float64 { return rd.Lat.P99 }))
	thr := summarize(col(func(rd Round) float64 { return float64(rd.ThreadsPeak) }))
	r.IOPS, r.MBPerS = iops.center, mbps.center
	r.Lat = Latency{P50: p50.center, P90: median(col(func(rd Round) float64 { return rd.Lat.P90 })), P99: p99.center,
		P999: median(col(func(rd Round) float64 { return rd.Lat.P999 })),
		Max:  slices.Max(col(func(rd Round) float64 { return rd.Lat.Max }))}
	r.Spread = Spread{IOPS: iops.ci, MBPerS: mbps.ci, P50: p50.ci, P99: p99.ci, Threads: thr.ci}
	r.CPUUsPerOp = median(col(func(rd Round) float64 { return rd.CPUUsPerOp }))
	r.ThreadsPeak = int(math.Round(thr.center))
	r.WorkersPeak = int(math.Round(median(col(func(rd Round) float64 { return float64(rd.WorkersPeak) }))))
	r.AllocsPerOp = median(col(func(rd Round) float64 { return rd.AllocsPerOp }))
	r.SyscallsPerOp = median(col(func(rd Round) float64 { return rd.SyscallsPerOp }))
	r.SubmitUsPerOp = median(col(func(rd Round) float64 { return rd.SubmitUsPerOp }))
	r.LoopEntersPerOp = median(col(func(rd Round) float64 { return rd.LoopEntersPerOp }))
	r.LoopSleepsPerOp = median(col(func(rd Round) float64 { return rd.LoopSleepsPerOp }))
	r.ReadBytesPerOp = median(col(func(rd Round) float64 { return rd.ReadBytesPerOp }))
	r.ReadReqsPerOp = median(col(func(rd Round) float64 { return rd.ReadReqsPerOp }))
	r.BusyPerS = median(col(func(rd Round) float64 { return rd.BusyPerS }))
	var ns float64
	r.Ops, r.Bytes, r.Seconds = 0, 0, 0
	for _, rd := range rounds {
		r.Ops += rd.Ops
		r.Bytes += rd.Bytes
		r.Seconds += rd.Seconds
		ns += rd.Lat.Mean * float64(rd.Ops)
	}
	if r.Ops > 0 {
		r.Lat.Mean = ns / float64(r.Ops)
	}
	return r
}

// mbps is the per-round MB/s of a row.
func mbps(r Result) []float64 {
	vs := make([]float64, len(r.Rounds))
	for i, rd := range r.Rounds {
		vs[i] = rd.MBPerS
	}
	return vs
}

// setRatio sets r's ratio to its baseline b: the ratio of the medians, the
// test, and the bounds from the two intervals.
func setRatio(r, b *Result) {
	r.Ratio = r.MBPerS / b.MBPerS
	r.RatioP, r.RatioSignificant = 1, false
	r.RatioLo, r.RatioHi = 0, 0
	if r == b { // the baseline itself: nothing to test
		r.RatioP = 0
		return
	}
	if len(r.Rounds) < 2 || len(b.Rounds) < 2 {
		return
	}
	r.RatioP, r.RatioSignificant = compare(mbps(*r), mbps(*b))
	if b.Spread.MBPerS.Lo > 0 && b.Spread.MBPerS.Hi > 0 {
		r.RatioLo, r.RatioHi = r.Spread.MBPerS.Lo/b.Spread.MBPerS.Hi, r.Spread.MBPerS.Hi/b.Spread.MBPerS.Lo
	}
}

// confidenceName is the confidence of the IOPS intervals of n rounds.
func confidenceName(n int) string {
	if n >= 6 {
		return "95%"
	}
	return fmt.Sprintf("%.0f%% (the smallest to the largest round: 6 rounds give 95%%)", 100*(1-math.Pow(2, float64(1-n))))
}
