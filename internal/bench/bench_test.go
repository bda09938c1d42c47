package bench

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestHistogramQuantilesMatchSortedSamples(t *testing.T) {
	var h Histogram
	r := rand.New(rand.NewPCG(1, 2))
	var all []time.Duration
	for range 100000 {
		// Log-uniform from 10ns to 100ms: every bucket range is exercised.
		d := time.Duration(10 * math.Pow(10, r.Float64()*7))
		all = append(all, d)
		h.Record(d)
	}
	slices.Sort(all)
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999, 1} {
		exact := all[max(0, int(q*float64(len(all)))-1)]
		got := h.Quantile(q)
		if got < exact || float64(got-exact) > float64(exact)/100+1 {
			t.Errorf("q=%v: got %v, exact %v (allowed error 1%%)", q, got, exact)
		}
	}
	if h.Max() != all[len(all)-1] {
		t.Errorf("max %v, want %v", h.Max(), all[len(all)-1])
	}
	if h.Count() != uint64(len(all)) {
		t.Errorf("count %d", h.Count())
	}
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	if h.Mean() != sum/time.Duration(len(all)) {
		t.Errorf("mean %v, want %v", h.Mean(), sum/time.Duration(len(all)))
	}
	cdf := h.CDF()
	if cdf[len(cdf)-1].Frac != 1 || cdf[len(cdf)-1].D != h.Max() {
		t.Errorf("CDF ends at %+v", cdf[len(cdf)-1])
	}
	for i := 1; i < len(cdf); i++ {
		if cdf[i].D < cdf[i-1].D || cdf[i].Frac <= cdf[i-1].Frac {
			t.Fatalf("CDF not increasing at %d: %+v %+v", i, cdf[i-1], cdf[i])
		}
	}
}

func TestHistogramConcurrent(t *testing.T) {
	var h Histogram
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				h.Record(time.Duration(g*1000 + i))
			}
		}()
	}
	wg.Wait()
	if h.Count() != 8000 || h.Max() != 7999 {
		t.Fatalf("count %d max %v", h.Count(), h.Max())
	}
	if h.Quantile(0) != 0 {
		t.Fatalf("q0 = %v", h.Quantile(0))
	}
	var long Histogram
	long.Record(2 * time.Hour) // beyond the buckets: counted as an hour, Max exact
	if long.Count() != 1 || long.Max() != 2*time.Hour || long.Quantile(1) != 2*time.Hour {
		t.Fatalf("2h recorded as count %d max %v q1 %v", long.Count(), long.Max(), long.Quantile(1))
	}
	var empty Histogram
	if empty.Quantile(0.5) != 0 || empty.Mean() != 0 || empty.CDF() != nil {
		t.Fatal("empty histogram not zero")
	}
}

// Recording cost, from every CPU at once (go test -bench Record -cpu 1,2).
func BenchmarkRecord(b *testing.B) {
	var h Histogram
	b.RunParallel(func(pb *testing.PB) {
		d := 30 * time.Microsecond
		for pb.Next() {
			h.Record(d)
			d += 7
		}
	})
}

func TestRand(t *testing.T) {
	a, b := NewRand(0), NewRand(1)
	seen := map[uint64]bool{}
	for range 1000 {
		x, y := a.Next(), b.Next()
		if x == 0 || x == y || seen[x] {
			t.Fatalf("bad sequence: %d %d", x, y)
		}
		seen[x] = true
	}
	counts := make([]int, 16)
	for range 16000 {
		off := a.Offset(16*4096+100, 4096)
		if off%4096 != 0 || off < 0 || off > 15*4096 {
			t.Fatalf("offset %d", off)
		}
		counts[off/4096]++
	}
	for i, c := range counts {
		if c < 700 || c > 1300 {
			t.Errorf("block %d drawn %d times of 16000", i, c)
		}
	}
	if a.Offset(100, 4096) != 0 {
		t.Error("offset in a file smaller than a block")
	}
}

func TestMeterSeesThreadsCPUAndAllocs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("threads and CPU time are read from Linux interfaces")
	}
	m := StartMeter()
	before := Threads()
	// Four goroutines each holding a locked thread asleep in the kernel.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			<-stop
		}()
	}
	time.Sleep(3 * SampleEvery)
	// Busy until the process has used 20ms of CPU (not of wall time: on
	// a busy machine 20ms of wall time may get half of that).
	var sink []*[64]byte
	cpu0 := CPUTime()
	for t0 := time.Now(); CPUTime()-cpu0 < 20*time.Millisecond && time.Since(t0) < 5*time.Second; {
		for range 1000 {
			sink = append(sink, new([64]byte))
		}
	}
	close(stop)
	wg.Wait()
	u := m.Stop()
	if before <= 0 || u.PeakThreads < 4 {
		t.Errorf("threads: %d before, peak %d", before, u.PeakThreads)
	}
	if u.CPU < 10*time.Millisecond {
		t.Errorf("cpu %v after 20ms of busy work", u.CPU)
	}
	// The runtime counts allocations when the span they came from leaves
	// its P's cache: up to a span per P (128 of these objects) may not
	// be counted yet.
	if u.Allocs+256 < uint64(len(sink)) {
		t.Errorf("allocs %d, made %d", u.Allocs, len(sink))
	}
	if u.Elapsed < 10*time.Millisecond {
		t.Errorf("elapsed %v", u.Elapsed)
	}
}
