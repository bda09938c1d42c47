package trace

import (
	"math/bits"
	"time"
)

// histogram is a log-linear histogram of durations, in the manner of HDR
// histograms: each power of two is split into 16 linear buckets, so any
// recorded value is known within 1/16 (6%), from 1ns to 2^63ns, in a
// fixed 1024 counters.
type histogram struct {
	counts   [64 * subBuckets]uint64
	n        uint64
	sum      int64
	min, max int64
}

const subBits = 4
const subBuckets = 1 << subBits

func bucketOf(v int64) int {
	if v < subBuckets {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - 1 // v in [2^e, 2^(e+1))
	sub := int(uint64(v)>>(e-subBits)) - subBuckets
	return (e-subBits+1)*subBuckets + sub
}

// bucketTop is the largest value in bucket i.
func bucketTop(i int) int64 {
	if i < subBuckets {
		return int64(i)
	}
	e := i/subBuckets + subBits - 1
	sub := i % subBuckets
	lo := int64(subBuckets+sub) << (e - subBits)
	return lo + int64(1)<<(e-subBits) - 1
}

func (h *histogram) add(d time.Duration) {
	v := int64(d)
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += v
}

// quantile is the value at or below which fraction q of the values lie
// (the bucket's upper end, clamped to the exact maximum).
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(max(bucketTop(i), h.min), h.max))
		}
	}
	return time.Duration(h.max)
}

func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / int64(h.n))
}
