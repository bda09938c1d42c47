package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The zipfian generator draws rank k with probability 1/((k+1)^θ ζ(n)):
// exactly for ranks 0 and 1; beyond, Gray et al.'s method (and so YCSB)
// approximates it by a continuous curve, within ~20% here.
func TestZipfian(t *testing.T) {
	const n, draws = 1000, 400000
	z := newZipfian(n, 0.99)
	r := rand.New(rand.NewPCG(1, 2))
	var count [n]int
	for range draws {
		k := z.rank(r)
		if k >= n {
			t.Fatalf("rank %d out of [0, %d)", k, n)
		}
		count[k]++
	}
	for _, k := range []int{0, 1, 2, 9, 99} {
		want := draws / math.Pow(float64(k+1), 0.99) / z.zetan
		tol := 0.25
		if k < 2 {
			tol = 0.05
		}
		if got := float64(count[k]); math.Abs(got-want)/want > tol {
			t.Errorf("rank %d drawn %v times, want about %.0f", k, got, want)
		}
	}
}

// Scrambling spreads the hot ranks over the key space, and keys of
// different records differ.
func TestRecordsAndKeys(t *testing.T) {
	z := newZipfian(1000000, 0.99)
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[string]uint64{}
	for i := uint64(0); i < 10000; i++ {
		k := string(key(i))
		if j, dup := seen[k]; dup {
			t.Fatalf("records %d and %d share key %s", i, j, k)
		}
		seen[k] = i
	}
	var low int
	for range 10000 {
		if rec := z.record(r, true); rec < 1000 {
			low++
		}
	}
	if low > 1000 { // unscrambled, most draws would be the lowest records
		t.Errorf("%d of 10000 draws in the lowest 0.1%% of records", low)
	}
}

func TestWorkloadMix(t *testing.T) {
	w := workloads["B"]
	r := rand.New(rand.NewPCG(5, 6))
	var reads int
	for range 100000 {
		if w.pick(r) == opRead {
			reads++
		}
	}
	if reads < 94000 || reads > 96000 {
		t.Errorf("workload B: %d reads in 100000, want ~95000", reads)
	}
	if _, err := parseWorkloads("A,b,Z"); err == nil {
		t.Error("workload Z accepted")
	}
}
