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

// Workload F: half reads, half read-modify-writes; D: 95% reads, the rest
// inserts.
func TestWorkloadsDF(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		name  string
		op    opKind
		share float64
	}{{"F", opRMW, 0.5}, {"F", opRead, 0.5}, {"D", opRead, 0.95}, {"D", opInsert, 0.05}} {
		w := workloads[c.name]
		n := 0
		for range 100000 {
			if w.pick(r) == c.op {
				n++
			}
		}
		if got := float64(n) / 100000; math.Abs(got-c.share) > 0.01 {
			t.Errorf("workload %s: op %d is %.3f of the mix, want %.2f", c.name, c.op, got, c.share)
		}
	}
	if _, err := parseWorkloads("d,F"); err != nil {
		t.Error(err)
	}
}

// The latest distribution favours the newest record and never goes past
// it or below record 0.
func TestLatest(t *testing.T) {
	const n = 100000
	z := newZipfian(n, 0.99)
	r := rand.New(rand.NewPCG(9, 10))
	newest := uint64(n + 500)
	var top, recent int
	for range 100000 {
		rec := z.latest(r, newest)
		if rec > newest {
			t.Fatalf("record %d past the newest %d", rec, newest)
		}
		if rec == newest {
			top++
		}
		if newest-rec < 100 {
			recent++
		}
	}
	// P(rank 0) = 1/ζ(n) ≈ 0.082 for θ 0.99, n 1e5; the newest 100 hold ≈ 0.43.
	if top < 7000 || top > 9500 {
		t.Errorf("newest record drawn %d times in 100000, want ~8200", top)
	}
	if recent < 38000 || recent > 50000 {
		t.Errorf("newest 100 records drawn %d times in 100000, want ~43000", recent)
	}
	if got := z.latest(r, 3); got > 3 {
		t.Errorf("latest(3) = %d", got)
	}
}

// Inserts commit out of order; readers only see the newest record below
// which all have committed.
func TestInserts(t *testing.T) {
	a := newInserts(10)
	if a.latest() != 9 {
		t.Fatalf("latest before inserts = %d, want 9", a.latest())
	}
	x, y, z := a.take(), a.take(), a.take()
	if x != 10 || y != 11 || z != 12 {
		t.Fatalf("took %d %d %d, want 10 11 12", x, y, z)
	}
	a.commit(12)
	a.commit(11)
	if a.latest() != 9 {
		t.Errorf("latest = %d with 10 uncommitted, want 9", a.latest())
	}
	a.commit(10)
	if a.latest() != 12 {
		t.Errorf("latest = %d after all commits, want 12", a.latest())
	}
}
