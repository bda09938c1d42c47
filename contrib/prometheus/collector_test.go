//go:build linux

package diskioprom

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

const blockSize = 4096

func newSched(tb testing.TB, opts sched.Options) *sched.Scheduler {
	tb.Helper()
	opts.Backend = sched.URing
	s, err := sched.New(opts)
	if err != nil {
		testenv.Unavailable(tb, "uring", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// gather collects c through a pedantic registry (which checks every
// metric against its description) and returns the families by name.
func gather(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	fams, err := reg.Gather()
	require.NoError(t, err)
	m := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		m[f.GetName()] = f
	}
	return m
}

// find returns the metric of f whose labels include want.
func find(t *testing.T, f *dto.MetricFamily, want map[string]string) *dto.Metric {
	t.Helper()
	require.NotNil(t, f)
next:
	for _, m := range f.Metric {
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("%s: no metric with labels %v", f.GetName(), want)
	return nil
}

// Every bucket bound is a boundary of sched.Histogram's buckets, so
// that each cumulative count is exact, and they resolve 10µs to 10s.
func TestBoundsAreBucketBoundaries(t *testing.T) {
	tops := map[time.Duration]bool{}
	for i := range sched.HistogramBuckets {
		tops[sched.BucketTop(i)] = true
	}
	for _, b := range bounds {
		require.True(t, tops[time.Duration(b-1)], "bound %dns is not a bucket boundary", b)
	}
	require.Less(t, boundSeconds[0], 10e-6)
	require.Greater(t, boundSeconds[len(boundSeconds)-1], 10.0)
	require.LessOrEqual(t, len(bounds)+1, 64)
}

// The metrics say what ReadStats says: requests, bytes and histograms
// by op and class, with buckets that count exactly the durations under
// their bounds; names and help pass Prometheus's linter.
func TestMetricsMatchStats(t *testing.T) {
	s := newSched(t, sched.Options{})
	f := testenv.DirectFile(t)
	h, err := s.Open(int(f.Fd()), f.Name())
	require.NoError(t, err)
	defer h.Close()
	require.NoError(t, h.SetClass(sched.Latency))
	buf := testenv.AlignedBuf(t, 64*blockSize)
	for i := range 64 {
		_, err := h.WriteAt(buf[i*blockSize:(i+1)*blockSize], int64(i)*blockSize)
		require.NoError(t, err)
	}
	require.NoError(t, h.Fdatasync())
	for i := range 100 {
		_, err := h.ReadAt(buf[:2*blockSize], int64(i%60)*blockSize)
		require.NoError(t, err)
	}
	c := New(s, Options{})
	var st sched.Stats
	s.ReadStats(&st)
	fams := gather(t, c)

	for _, name := range []string{"diskio_scheduler_info", "diskio_in_flight_requests", "diskio_caller_places",
		"diskio_slow_requests_total", "diskio_oldest_stall_age_seconds", "diskio_os_threads", "diskio_iouring_workers", "diskio_fallbacks_total"} {
		require.Contains(t, fams, name)
	}
	read := find(t, fams["diskio_requests_total"], map[string]string{"op": "read", "class": "latency"})
	require.EqualValues(t, 100, read.GetCounter().GetValue())
	bytes := find(t, fams["diskio_bytes_total"], map[string]string{"op": "read", "class": "latency"})
	require.EqualValues(t, 100*2*blockSize, bytes.GetCounter().GetValue())
	writes := find(t, fams["diskio_bytes_total"], map[string]string{"op": "write", "class": "latency"})
	require.EqualValues(t, 64*blockSize, writes.GetCounter().GetValue())
	sync := find(t, fams["diskio_requests_total"], map[string]string{"op": "fdatasync", "class": "latency"})
	require.EqualValues(t, 1, sync.GetCounter().GetValue())

	o := st.Ops[sched.OpRead][sched.Latency]
	for _, kind := range []struct {
		name string
		h    *sched.Histogram
	}{{"diskio_device_duration_seconds", &o.Device}, {"diskio_queue_duration_seconds", &o.Queue}} {
		h := find(t, fams[kind.name], map[string]string{"op": "read", "class": "latency"}).GetHistogram()
		require.EqualValues(t, 100, h.GetSampleCount())
		require.InDelta(t, kind.h.Sum.Seconds(), h.GetSampleSum(), 1e-9)
		require.Len(t, h.Bucket, len(bounds))
		for _, b := range h.Bucket {
			// Durations under the bound, counted from the
			// scheduler's buckets one by one.
			var under uint64
			for i, n := range kind.h.Counts {
				if sched.BucketTop(i).Seconds() < b.GetUpperBound() {
					under += n
				}
			}
			require.Equal(t, under, b.GetCumulativeCount(), "%s le=%g", kind.name, b.GetUpperBound())
		}
	}
	threads := fams["diskio_os_threads"].Metric[0].GetGauge().GetValue()
	require.Greater(t, threads, 1.0)

	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// The stall series show a request the device holds, with its age, and
// the counts of slow requests at each doubling.
func TestStallMetrics(t *testing.T) {
	const threshold = 100 * time.Millisecond
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	s := newSched(t, sched.Options{
		SlowThreshold: threshold,
		Faults: sched.FaultFunc(func(a sched.Attempt) sched.Fault {
			if a.Op == sched.OpRead && a.Off == 8*blockSize {
				return sched.Fault{Delay: 600 * time.Millisecond}
			}
			return sched.Fault{}
		}),
	})
	buf := testenv.AlignedBuf(t, 16*blockSize)
	_, err := s.WriteAt(fd, buf, 0)
	require.NoError(t, err)
	c := New(s, Options{ConstLabels: prometheus.Labels{"scheduler": "test"}})
	done := make(chan error, 1)
	go func() {
		_, err := s.ReadAt(fd, buf[:blockSize], 8*blockSize)
		done <- err
	}()
	time.Sleep(250 * time.Millisecond)
	fams := gather(t, c)
	require.EqualValues(t, 1, fams["diskio_stalled_requests"].Metric[0].GetGauge().GetValue())
	age := fams["diskio_oldest_stall_age_seconds"].Metric[0].GetGauge().GetValue()
	require.GreaterOrEqual(t, age, 0.2)
	require.Less(t, age, 0.6)
	slow := fams["diskio_slow_requests_total"]
	require.Len(t, slow.Metric, sched.SlowDoublings)
	require.EqualValues(t, 1, find(t, slow, map[string]string{"waited_seconds": "0.1"}).GetCounter().GetValue())
	require.EqualValues(t, 1, find(t, slow, map[string]string{"waited_seconds": "0.2", "scheduler": "test"}).GetCounter().GetValue())
	require.EqualValues(t, 0, find(t, slow, map[string]string{"waited_seconds": "0.4"}).GetCounter().GetValue())
	require.NoError(t, <-done)
	fams = gather(t, c)
	require.EqualValues(t, 0, fams["diskio_stalled_requests"].Metric[0].GetGauge().GetValue())
	require.EqualValues(t, 0, fams["diskio_oldest_stall_age_seconds"].Metric[0].GetGauge().GetValue())
	require.EqualValues(t, 1, find(t, fams["diskio_slow_requests_total"], map[string]string{"waited_seconds": "0.4"}).GetCounter().GetValue())
	longest := fams["diskio_slow_longest_wait_seconds"].Metric[0].GetGauge().GetValue()
	require.GreaterOrEqual(t, longest, 0.4)
}

// A nil scheduler collects nothing (the process-wide scheduler where
// none starts).
func TestNilScheduler(t *testing.T) {
	n, err := testutil.GatherAndCount(func() *prometheus.Registry {
		r := prometheus.NewPedanticRegistry()
		r.MustRegister(New(nil, Options{}))
		return r
	}())
	require.NoError(t, err)
	require.Zero(t, n)
}

// Nothing is added to the I/O path: with the collector registered and
// scraped, a read through the scheduler still allocates nothing.
func TestZeroAllocsPerReadWhileCollected(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := newSched(t, sched.Options{NoInline: true})
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	buf := testenv.AlignedBuf(t, blockSize)
	_, err := s.WriteAt(fd, buf, 0)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	reg.MustRegister(New(s, Options{}))
	_, err = reg.Gather()
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := s.ReadAt(fd, buf, 0); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
	_, err = reg.Gather()
	require.NoError(t, err)
}

// hold1024 starts a scheduler and holds 1,024 reads in flight (an injected
// late completion of hold), returning it once the loop has them all in
// the kernel; cleanup waits for them.
func hold1024(tb testing.TB, hold time.Duration) *sched.Scheduler {
	f := testenv.DirectFile(tb)
	fd := int(f.Fd())
	var release = make(chan struct{})
	s := newSched(tb, sched.Options{
		Entries: 1024,
		Faults: sched.FaultFunc(func(a sched.Attempt) sched.Fault {
			select {
			case <-release:
				return sched.Fault{}
			default:
				return sched.Fault{Delay: hold}
			}
		}),
	})
	buf := testenv.AlignedBuf(tb, blockSize)
	if _, err := f.WriteAt(buf, 0); err != nil {
		tb.Fatal(err)
	}
	calls := make([]sched.Call, 1024)
	for i := range calls {
		calls[i] = s.StartReadAt(fd, buf, 0)
	}
	tb.Cleanup(func() {
		close(release)
		// Closing waits for the held reads.
		for _, c := range calls {
			c.Wait()
		}
	})
	var st sched.Stats
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.ReadStats(&st)
		if st.InFlight[sched.Unclassified] == 1024 {
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d reads in flight, want 1024", st.InFlight[sched.Unclassified])
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkCollect1024InFlight: one scrape's collection (ReadStats and the
// constant metrics, histograms converted) from a scheduler with 1,024
// requests in flight.
//
//	flock -x /tmp/diskio-measure.lock go test -run '^$' -bench Collect1024 ./contrib/prometheus/
func BenchmarkCollect1024InFlight(b *testing.B) {
	s := hold1024(b, 10*time.Second)
	c := New(s, Options{})
	ch := make(chan prometheus.Metric, 4096)
	b.ReportAllocs()
	for b.Loop() {
		c.Collect(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
	b.StopTimer()
	var st sched.Stats
	if s.ReadStats(&st); st.InFlight[sched.Unclassified] != 1024 {
		b.Fatalf("%d in flight at the end, want 1024: the hold is too short for -benchtime", st.InFlight[sched.Unclassified])
	}
}

// A scrape's collection with 1,024 requests in flight takes under 1ms
// (the median of 50).
func TestCollectCost(t *testing.T) {
	if raceEnabled {
		t.Skip("timing under the race detector")
	}
	s := hold1024(t, 3*time.Second)
	c := New(s, Options{})
	ch := make(chan prometheus.Metric, 4096)
	var took []time.Duration
	for range 50 {
		start := time.Now()
		c.Collect(ch)
		took = append(took, time.Since(start))
		n := len(ch)
		for len(ch) > 0 {
			<-ch
		}
		require.Greater(t, n, 20)
	}
	var st sched.Stats
	s.ReadStats(&st)
	require.Equal(t, 1024, st.InFlight[sched.Unclassified], "still in flight")
	med := median(took)
	t.Logf("collect with 1024 in flight: median %v", med)
	require.Less(t, med, time.Millisecond)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestFallbackUnderSeccomp: under a real seccomp filter that refuses
// io_uring (or io_uring and Linux AIO), the process-wide scheduler runs
// on the next backend, and the collector says so:
// diskio_scheduler_fallback is 1 with that backend's label, as
// diskio_scheduler_info's is.
func TestFallbackUnderSeccomp(t *testing.T) {
	for _, c := range testenv.Refusals {
		t.Run(c.Refused.String(), func(t *testing.T) {
			if !testenv.UnderFilter(t, c.Refused) {
				return
			}
			t.Setenv("DISKIO_BACKEND", "")
			s, err := sched.Default()
			require.NoError(t, err)
			for _, r := range c.Reasons {
				require.Contains(t, s.FallbackReason(), r)
			}
			fams := gather(t, New(s, Options{}))
			label := map[string]string{"backend": c.Backend}
			require.EqualValues(t, 1, find(t, fams["diskio_scheduler_fallback"], label).GetGauge().GetValue())
			require.EqualValues(t, 1, find(t, fams["diskio_scheduler_info"], label).GetGauge().GetValue())
		})
	}
}
