//go:build linux

package sched

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/testenv"
)

// While a latency request is in flight, background requests beyond the
// bound wait in the loop; the bound adapts to their device time (here
// down to its floor, as the goal is 1ns, and up to the slots with a goal
// of an hour).
func TestBackgroundBoundedWhileLatencyWaits(t *testing.T) {
	for _, b := range []Backend{URing, AIO} {
		for _, goal := range []time.Duration{1, time.Hour} {
			t.Run(string(b)+"/goal="+goal.String(), func(t *testing.T) {
				const stuck = time.Second
				s := newSched(t, b, Options{
					Classes: ClassOptions{MinBackground: 2, Hold: time.Millisecond, Goal: goal},
					// Everything through the loop, whose bound this is.
					NoInline: true,
					Faults: FaultFunc(func(a Attempt) Fault {
						if a.Op == OpFsync {
							return Fault{Delay: stuck}
						}
						return Fault{}
					}),
				})
				f := testenv.DirectFile(t)
				fd := int(f.Fd())
				const readers = 64
				buf := testenv.AlignedBuf(t, readers*blockSize)
				_, err := s.WriteAt(fd, buf, 0)
				require.NoError(t, err)

				synced := make(chan error, 1)
				go func() { synced <- s.SyncClass(fd, true, Latency) }()
				var st Stats
				require.Eventually(t, func() bool {
					s.ReadStats(&st)
					return st.InFlight[Latency] == 1
				}, time.Second, time.Millisecond)
				var wg sync.WaitGroup
				done := make(chan struct{})
				maxIn := make(chan int)
				go func() {
					var st Stats
					m := 0
					for {
						select {
						case <-done:
							maxIn <- m
							return
						default:
						}
						s.ReadStats(&st)
						m = max(m, st.InFlight[Background])
					}
				}()
				for range 5 {
					for i := range readers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							_, err := s.ReadAtClass(fd, buf[i*blockSize:(i+1)*blockSize], int64(i)*blockSize, Background)
							require.NoError(t, err)
						}()
					}
					wg.Wait()
				}
				close(done)
				m := <-maxIn
				s.ReadStats(&st)
				require.Equal(t, 1, st.InFlight[Latency], "the sync is still in flight")
				require.EqualValues(t, 5*readers, st.Ops[OpRead][Background].Requests())
				require.Zero(t, st.Queued)
				if goal == 1 {
					require.Equal(t, 2, st.BackgroundBound)
					require.LessOrEqual(t, m, 16, "more background requests in flight than the first bound")
				} else {
					// The bound grew past its first 16, and the reads went
					// past the floor (all 64 at once, unless a loaded
					// machine spread their goroutines apart: 13 once while
					// other packages' tests ran).
					require.Greater(t, m, 2)
					require.Greater(t, st.BackgroundBound, 16)
				}
				require.NoError(t, <-synced)
			})
		}
	}
}

// With classes off nothing is held back.
func TestClassesOff(t *testing.T) {
	s := newSched(t, URing, Options{
		Classes: ClassOptions{Off: true},
		Faults: FaultFunc(func(a Attempt) Fault {
			if a.Op == OpFsync {
				return Fault{Delay: 200 * time.Millisecond}
			}
			return Fault{}
		}),
	})
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	buf := testenv.AlignedBuf(t, 64*blockSize)
	_, err := s.WriteAt(fd, buf, 0)
	require.NoError(t, err)
	synced := make(chan error, 1)
	go func() { synced <- s.SyncClass(fd, true, Latency) }()
	time.Sleep(20 * time.Millisecond)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.ReadAtClass(fd, buf[i*blockSize:(i+1)*blockSize], int64(i)*blockSize, Background)
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	require.Less(t, time.Since(start), 150*time.Millisecond, "background reads waited for the sync")
	require.NoError(t, <-synced)
	require.Zero(t, s.Stats().BackgroundBound)
}

// The class's ioprio reaches the kernel with each read and write: an
// invalid one (class 7) is refused with EINVAL, for that class only.
func TestIoprioReachesKernel(t *testing.T) {
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{NoInline: true, Classes: ClassOptions{Ioprio: [NumClasses]Ioprio{
				Latency:    MakeIoprio(IoprioBestEffort, 0),
				Background: MakeIoprio(7, 0),
			}}})
			f := testenv.DirectFile(t)
			fd := int(f.Fd())
			buf := testenv.AlignedBuf(t, blockSize)
			_, err := s.WriteAtClass(fd, buf, 0, Latency)
			require.NoError(t, err)
			_, err = s.ReadAtClass(fd, buf, 0, Latency)
			require.NoError(t, err)
			_, err = s.ReadAt(fd, buf, 0)
			require.NoError(t, err)
			_, err = s.ReadAtClass(fd, buf, 0, Background)
			require.ErrorIs(t, err, unix.EINVAL)
			_, err = s.WriteAtClass(fd, buf, 0, Background)
			require.ErrorIs(t, err, unix.EINVAL)
			require.NoError(t, s.SyncClass(fd, false, Background)) // syncs carry none
		})
	}
}

// A class is its File's: two Files of one descriptor number (one
// closed, the next given the number again) share nothing.
func TestSetClass(t *testing.T) {
	s := newSched(t, URing, Options{})
	f, err := s.Open(5, "five")
	require.NoError(t, err)
	require.Equal(t, Unclassified, f.Class())
	require.NoError(t, f.SetClass(Background))
	require.Equal(t, Background, f.Class())
	require.Error(t, f.SetClass(NumClasses))
	require.Equal(t, Background, f.Class())
	g, err := s.Open(1<<30, "large")
	require.NoError(t, err)
	require.NoError(t, g.SetClass(Latency))
	require.Equal(t, Latency, g.Class())
	require.NoError(t, f.Close())
	f2, err := s.Open(5, "five again")
	require.NoError(t, err)
	require.Equal(t, Unclassified, f2.Class())
	_, err = s.Open(-1, "")
	require.ErrorIs(t, err, unix.EBADF)
	require.NoError(t, s.Close())
	_, err = s.Open(5, "")
	require.ErrorIs(t, err, ErrClosed)
}

// A latency-class request on its caller's thread holds the background
// bound as one in the kernel does: while it runs, and for Hold after.
func TestBoundHeldByLatencyOnCaller(t *testing.T) {
	var c callerLatency
	p := newClassPolicy(ClassOptions{Hold: time.Millisecond}, 64)
	p.callers = &c
	now := Now()
	require.Equal(t, 64, p.limit(now), "nothing waits: no bound")
	c.n.Add(1)
	require.Equal(t, p.bound>>8, p.limit(now), "a sync on its caller: bound")
	c.last.Store(now)
	c.n.Add(-1)
	require.Equal(t, p.bound>>8, p.limit(now+int64(time.Millisecond)/2), "within Hold of its end: bound")
	require.Equal(t, 64, p.limit(now+2*int64(time.Millisecond)), "after Hold: no bound")
}
