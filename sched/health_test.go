//go:build linux

package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
)

// A request the device holds shows as a stall whose age grows while it
// lasts, counted at each doubling of the threshold it reaches; the age
// is gone once it completes. Reading it allocates nothing.
func TestStallAge(t *testing.T) {
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			const threshold = 100 * time.Millisecond
			const stuck = 500 * time.Millisecond // reported at 100, 200, 400ms
			f := testenv.DirectFile(t)
			fd := int(f.Fd())
			s := newSched(t, b, Options{
				SlowThreshold: threshold,
				Faults: FaultFunc(func(a Attempt) Fault {
					if a.Op == OpRead && a.Off == 8*blockSize {
						return Fault{Delay: stuck}
					}
					return Fault{}
				}),
			})
			buf := testenv.AlignedBuf(t, 16*blockSize)
			_, err := s.WriteAt(fd, buf, 0)
			require.NoError(t, err)

			var st Stats
			s.ReadStats(&st)
			require.Zero(t, st.Slow.Oldest)
			start := time.Now()
			done := make(chan error, 1)
			go func() {
				_, err := s.ReadAt(fd, buf[:blockSize], 8*blockSize)
				done <- err
			}()
			require.Eventually(t, func() bool {
				s.ReadStats(&st)
				return st.Slow.Stalled == 1
			}, 2*stuck, time.Millisecond)
			first := st.Slow.Oldest
			require.GreaterOrEqual(t, first, threshold)
			require.LessOrEqual(t, first, time.Since(start))
			time.Sleep(50 * time.Millisecond)
			s.ReadStats(&st)
			require.GreaterOrEqual(t, st.Slow.Oldest, first+50*time.Millisecond, "the age grows while the stall lasts")

			require.NoError(t, <-done)
			s.ReadStats(&st)
			require.Zero(t, st.Slow.Stalled)
			require.Zero(t, st.Slow.Oldest, "no stall once it completed")
			require.Equal(t, [SlowDoublings]uint64{1, 1, 1}, st.Slow.Doublings)
			require.Equal(t, st.Slow.Requests, st.Slow.Doublings[0])

			allocs := testing.AllocsPerRun(100, func() { s.ReadStats(&st) })
			require.Zero(t, allocs)
		})
	}
}

// The slots are counted by kind; files that run buffered are counted
// from ReportBuffered, the scheduler's own fallback is not.
func TestPlacesAndFallbacks(t *testing.T) {
	s := newSched(t, URing, Options{IOWQMaxWorkers: 3})
	var st Stats
	s.ReadStats(&st)
	require.Equal(t, PlaceStats{Inline: maxInline, Blocking: 3}, st.Places)
	require.Zero(t, st.Fallbacks)
	s.reportFallback(Fallback{Reason: "test: scheduler"})
	h, err := s.Open(0, "/x")
	require.NoError(t, err)
	h.ReportBuffered("test: file")
	s.ReadStats(&st)
	require.EqualValues(t, 1, st.Fallbacks)

	// A slot in use is counted while its request runs.
	p := s.takeSlot()
	require.NotNil(t, p)
	s.ReadStats(&st)
	require.Equal(t, 1, st.Places.InlineInUse)
	s.freeSlot(p)
	s.ReadStats(&st)
	require.Zero(t, st.Places.InlineInUse)
}
