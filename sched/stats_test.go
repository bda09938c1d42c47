//go:build linux

package sched

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
)

func TestHistogramBuckets(t *testing.T) {
	var h Histogram
	var rec histRec
	for _, d := range []int64{0, 1, 7, 8, 9, 1000, 999_999, 1_000_000, 1 << 39, 1<<40 + 5, 1 << 62} {
		i := histBucket(d)
		require.GreaterOrEqual(t, int64(BucketTop(i)), min(d, int64(BucketTop(HistogramBuckets-1))), "d=%d bucket %d", d, i)
		if i > 0 && d < 1<<40 {
			require.Less(t, int64(BucketTop(i-1)), d, "d=%d bucket %d", d, i)
			// Within 12.5% of the value.
			require.LessOrEqual(t, float64(BucketTop(i)), float64(d)*1.125+1, "d=%d", d)
		}
		rec.record(d)
	}
	rec.load(&h)
	require.EqualValues(t, 11, h.Count())
	require.Equal(t, time.Duration(0), h.Quantile(0))
	require.Equal(t, BucketTop(HistogramBuckets-1), h.Quantile(1))
	var one Histogram
	rec = histRec{}
	for range 99 {
		rec.record(int64(100 * time.Microsecond))
	}
	rec.record(int64(time.Second))
	rec.load(&one)
	require.InDelta(t, float64(100*time.Microsecond), float64(one.Quantile(0.5)), float64(13*time.Microsecond))
	require.InDelta(t, float64(100*time.Microsecond), float64(one.Quantile(0.99)), float64(13*time.Microsecond))
	require.InDelta(t, float64(time.Second), float64(one.Quantile(0.999)), float64(130*time.Millisecond))
}

// Every request is counted once, by op and class, with its bytes, and the
// gauges come back to zero; String is JSON.
func TestStatsCount(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{NoInline: true})
			f := testenv.DirectFile(t)
			fd := int(f.Fd())
			h := classed(t, s, fd, Background)
			const writers = 16
			buf := testenv.AlignedBuf(t, writers*blockSize)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := buf[i*blockSize : (i+1)*blockSize]
					_, err := h.WriteAt(p, int64(i)*blockSize)
					require.NoError(t, err)
					_, err = s.ReadAtClass(fd, p, int64(i)*blockSize, Latency)
					require.NoError(t, err)
				}()
			}
			wg.Wait()
			require.NoError(t, h.Fdatasync())
			require.NoError(t, s.SyncClass(fd, true, Latency))
			_, err := s.ReadAt(-1, buf[:blockSize], 0)
			require.Error(t, err)

			st := s.Stats()
			w := st.Ops[OpWrite][Background]
			require.EqualValues(t, writers, w.Requests())
			require.EqualValues(t, writers*blockSize, w.Bytes)
			r := st.Ops[OpRead][Latency]
			require.EqualValues(t, writers, r.Requests())
			require.EqualValues(t, writers*blockSize, r.Bytes)
			require.EqualValues(t, 1, st.Ops[OpFdatasync][Background].Requests())
			require.EqualValues(t, 1, st.Ops[OpFsync][Latency].Requests())
			bad := st.Ops[OpRead][Unclassified]
			require.EqualValues(t, 1, bad.Requests())
			require.EqualValues(t, 1, bad.Errors)
			tot := st.Total(OpRead)
			require.EqualValues(t, writers, tot.Requests()-1)
			require.Positive(t, w.Device.Quantile(0.5))
			require.Positive(t, w.Device.Sum)
			if b == Blocking {
				require.EqualValues(t, 2*writers+3, st.Inline)
			} else {
				require.Zero(t, st.Inline)
				require.Positive(t, st.Enters)
			}
			require.Zero(t, st.Queued)
			require.Equal(t, [NumClasses]int{}, st.InFlight)

			var doc map[string]any
			require.NoError(t, json.Unmarshal([]byte(s.StatsVar().String()), &doc), s.StatsVar().String())
			require.Equal(t, string(b), doc["backend"])
			require.Len(t, doc["ops"], 5)
		})
	}
}

// While a request is in the kernel the gauges show it, and its device
// time is counted when it completes.
func TestStatsInFlight(t *testing.T) {
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			const delay = 300 * time.Millisecond
			s := newSched(t, b, Options{Faults: FaultFunc(func(a Attempt) Fault {
				if a.Op == OpFsync {
					return Fault{Delay: delay}
				}
				return Fault{}
			})})
			f := testenv.DirectFile(t)
			done := make(chan error)
			go func() { done <- s.SyncClass(int(f.Fd()), true, Latency) }()
			var st Stats
			require.Eventually(t, func() bool {
				s.ReadStats(&st)
				return st.InFlight[Latency] == 1
			}, 2*time.Second, time.Millisecond)
			require.NoError(t, <-done)
			// The loop lowers the gauge once it has woken the caller.
			require.Eventually(t, func() bool {
				s.ReadStats(&st)
				return st.InFlight[Latency] == 0
			}, 2*time.Second, time.Millisecond)
			fs := st.Ops[OpFsync][Latency]
			require.EqualValues(t, 1, fs.Requests())
			require.GreaterOrEqual(t, fs.Device.Quantile(1), delay)
		})
	}
}

func TestZeroAllocsWithStats(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{NoInline: true})
			f := testenv.DirectFile(t)
			h := classed(t, s, int(f.Fd()), Latency)
			buf := testenv.AlignedBuf(t, blockSize)
			_, err := h.WriteAt(buf, 0)
			require.NoError(t, err)
			var st Stats
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := h.ReadAt(buf, 0); err != nil {
					panic(err)
				}
			})
			require.Zero(t, allocs)
			s.ReadStats(&st)
			require.GreaterOrEqual(t, st.Ops[OpRead][Latency].Requests(), uint64(1000))
			require.Zero(t, testing.AllocsPerRun(10, func() { s.ReadStats(&st) }))
		})
	}
}
