//go:build linux

package diskioprom

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/benchfile"
	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

func TestMain(m *testing.M) {
	testenv.InstallFilter() // DISKIO_TEST_SECCOMP
	code := m.Run()
	benchfile.Remove()
	os.Exit(code)
}

// envInt is the environment variable name as a positive count, or def.
func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive count", name, s)
	}
	return n
}

// BenchmarkScrapeCost: 4 KiB random O_DIRECT reads from 128 goroutines
// through one io_uring scheduler, for DISKIO_BENCH_SECONDS (default 3)
// per round, with the collector registered and scraped over HTTP every
// second ("on") and without it ("off"), in DISKIO_BENCH_ROUNDS (default
// 6) alternating rounds, the order swapped every round. It reports each
// side's median IOPS and the median of the per-round on/off ratios:
//
//	flock -x /tmp/diskio-measure.lock go test -run '^$' -bench ScrapeCost -benchtime 1x ./contrib/prometheus/
func BenchmarkScrapeCost(b *testing.B) {
	rounds := envInt(b, "DISKIO_BENCH_ROUNDS", 6)
	secs := envInt(b, "DISKIO_BENCH_SECONDS", 3)
	s := newSched(b, sched.Options{})
	size := benchfile.Size()
	path := benchfile.Shared(b, size)
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		testenv.Unavailable(b, "odirect", err)
	}
	defer f.Close()
	fd := int(f.Fd())
	bufs := testenv.AlignedBuf(b, 128*blockSize)

	reg := prometheus.NewRegistry()
	reg.MustRegister(New(s, Options{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	go srv.Serve(ln)
	defer srv.Close()
	metricsURL := "http://" + ln.Addr().String() + "/metrics"

	var scrapes atomic.Int64
	run := func(scrape bool, d time.Duration) float64 {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		if scrape {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := time.NewTicker(time.Second)
				defer t.Stop()
				for {
					select {
					case <-stop:
						return
					case <-t.C:
					}
					resp, err := http.Get(metricsURL)
					if err != nil {
						panic(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					scrapes.Add(1)
				}
			}()
		}
		var n atomic.Int64
		var done atomic.Bool
		start := time.Now()
		for g := range 128 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := bench.NewRand(uint64(g) + uint64(start.UnixNano()))
				p := bufs[g*blockSize : (g+1)*blockSize]
				for !done.Load() {
					off := rng.Offset(size, blockSize)
					if k, err := s.ReadAt(fd, p, off); k != blockSize {
						panic(fmt.Sprintf("read at %d: %d, %v", off, k, err))
					}
					n.Add(1)
				}
			}()
		}
		time.Sleep(d)
		done.Store(true)
		close(stop)
		wg.Wait()
		return float64(n.Load()) / time.Since(start).Seconds()
	}
	run(false, time.Second) // warm up
	b.ResetTimer()
	var on, off, ratio []float64
	d := time.Duration(secs) * time.Second
	for i := range rounds {
		var a, c float64
		if i%2 == 0 {
			a, c = run(true, d), run(false, d)
		} else {
			c, a = run(false, d), run(true, d)
		}
		on, off, ratio = append(on, a), append(off, c), append(ratio, a/c)
	}
	b.StopTimer()
	med := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(med(on), "IOPS-scraped")
	b.ReportMetric(med(off), "IOPS-unscraped")
	b.ReportMetric(med(ratio), "ratio")
	b.Logf("per round, scraped/unscraped: %.3f; %d scrapes", ratio, scrapes.Load())
}
