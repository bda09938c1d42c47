//go:build linux

package sched

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/testenv"
)

const blockSize = 4096

var backends = []Backend{URing, AIO, Blocking}

func newSched(t testing.TB, b Backend, opts Options) *Scheduler {
	t.Helper()
	opts.Backend = b
	s, err := New(opts)
	if err != nil {
		testenv.Unavailable(t, string(b), err)
	}
	require.Equal(t, b, s.Backend())
	t.Cleanup(func() { s.Close() })
	return s
}

// classed returns s's File for fd, with class c.
func classed(t testing.TB, s *Scheduler, fd int, c Class) *File {
	t.Helper()
	f, err := s.Open(fd, "")
	require.NoError(t, err)
	require.NoError(t, f.SetClass(c))
	t.Cleanup(func() { f.Close() })
	return f
}

func fill(b []byte, seed int) {
	for i := range b {
		b[i] = byte(i*7 + seed*31 + i>>8)
	}
}

func TestReadWriteConcurrent(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{Entries: 16})
			f := testenv.DirectFile(t)
			fd := int(f.Fd())
			const writers = 64 // more than Entries: callers must wait, not fail
			buf := testenv.AlignedBuf(t, 2*writers*blockSize)
			var wg sync.WaitGroup
			for i := 0; i < writers; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					w := buf[i*blockSize : (i+1)*blockSize]
					fill(w, i)
					n, err := s.WriteAt(fd, w, int64(i)*blockSize)
					require.NoError(t, err)
					require.Equal(t, blockSize, n)
					r := buf[(writers+i)*blockSize : (writers+i+1)*blockSize]
					n, err = s.ReadAt(fd, r, int64(i)*blockSize)
					require.NoError(t, err)
					require.Equal(t, blockSize, n)
					require.True(t, bytes.Equal(w, r), "block %d", i)
				}(i)
			}
			wg.Wait()
			require.NoError(t, s.Fsync(fd))
			require.NoError(t, s.Fdatasync(fd))
			require.NoError(t, s.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, 1<<20))
			require.NoError(t, s.nop())
		})
	}
}

func TestShortReadAtEOF(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{})
			path := filepath.Join(t.TempDir(), "short")
			data := make([]byte, 6000)
			fill(data, 3)
			require.NoError(t, os.WriteFile(path, data, 0o600))
			f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
			require.NoError(t, err)
			defer f.Close()
			buf := testenv.AlignedBuf(t, 4*blockSize)
			n, err := s.ReadAt(int(f.Fd()), buf, 0)
			require.NoError(t, err)
			require.Equal(t, 6000, n)
			require.Equal(t, data, buf[:n])
			n, err = s.ReadAt(int(f.Fd()), buf, 8192)
			require.NoError(t, err)
			require.Zero(t, n)
		})
	}
}

func TestMisalignedEINVALExplained(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{})
			f := testenv.DirectFile(t)
			buf := testenv.AlignedBuf(t, 2*blockSize)
			_, err := s.WriteAt(int(f.Fd()), buf, 0)
			require.NoError(t, err)
			_, err = s.ReadAt(int(f.Fd()), buf[:blockSize], 100)
			require.ErrorIs(t, err, unix.EINVAL)
			var e *dio.EINVALError
			require.True(t, errors.As(err, &e), "%v", err)
			require.Contains(t, err.Error(), "offset 100")
		})
	}
}

func TestErrorsReachTheirCaller(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{})
			buf := testenv.AlignedBuf(t, blockSize)
			_, err := s.ReadAt(-1, buf, 0)
			require.ErrorIs(t, err, unix.EBADF)
			// A write to a read-only fd fails for that caller only.
			f := testenv.DirectFile(t)
			ro, err := os.Open(f.Name())
			require.NoError(t, err)
			defer ro.Close()
			_, err = s.WriteAt(int(ro.Fd()), buf, 0)
			require.ErrorIs(t, err, unix.EBADF)
			_, err = s.WriteAt(int(f.Fd()), buf, 0)
			require.NoError(t, err)
		})
	}
}

func TestCloseFailsNewRequests(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{})
			require.NoError(t, s.Close())
			require.ErrorIs(t, s.nop(), ErrClosed)
			_, err := s.ReadAt(0, nil, 0)
			require.ErrorIs(t, err, ErrClosed)
			require.ErrorIs(t, s.Close(), ErrClosed)
		})
	}
}

// TestCloseWithCallsNotWaited: Close waits for started calls to complete
// in the kernel, not for their Wait, which may come late or never (a
// stream dropped); Wait after Close still returns each call's result.
func TestCloseWithCallsNotWaited(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{})
			f := testenv.DirectFile(t)
			data := testenv.AlignedBuf(t, 4*blockSize)
			fill(data, 7)
			_, err := s.WriteAt(int(f.Fd()), data, 0)
			require.NoError(t, err)
			bufs := testenv.AlignedBuf(t, 4*blockSize)
			batch := s.Batch()
			var calls []Call
			for i := range 3 {
				p := bufs[i*blockSize : (i+1)*blockSize]
				calls = append(calls, batch.StartReadAt(int(f.Fd()), p, int64(i*blockSize)))
			}
			batch.Submit()
			calls = append(calls, s.StartReadAt(int(f.Fd()), bufs[3*blockSize:], 3*blockSize))
			closed := make(chan error, 1)
			go func() { closed <- s.Close() }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("Close waited for calls nobody waits for")
			}
			for i, c := range calls {
				n, err := c.Wait()
				require.NoError(t, err, "call %d", i)
				require.Equal(t, blockSize, n)
			}
			require.Equal(t, data, bufs)
			require.ErrorIs(t, s.nop(), ErrClosed)
		})
	}
}

func TestZeroAllocsPerRead(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{})
			f := testenv.DirectFile(t)
			buf := testenv.AlignedBuf(t, blockSize)
			_, err := s.WriteAt(int(f.Fd()), buf, 0)
			require.NoError(t, err)
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := s.ReadAt(int(f.Fd()), buf, 0); err != nil {
					panic(err)
				}
			})
			require.Zero(t, allocs)
		})
	}
}

// Submitters, failing requests and Close, all at once: every call returns
// (success, its own error, or ErrClosed), nothing hangs, nothing leaks.
func TestStressSubmittersCloseErrors(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			before := runtime.NumGoroutine()
			s, err := New(Options{Backend: b, Entries: 8})
			if err != nil {
				testenv.Unavailable(t, string(b), err)
			}
			f := testenv.DirectFile(t)
			fd := int(f.Fd())
			const workers = 48
			buf := testenv.AlignedBuf(t, workers*blockSize)
			var wg sync.WaitGroup
			var ok, closed atomic.Int64
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					p := buf[w*blockSize : (w+1)*blockSize]
					for i := 0; ; i++ {
						var err error
						switch i % 4 {
						case 0:
							_, err = s.WriteAt(fd, p, int64(w)*blockSize)
						case 1:
							_, err = s.ReadAt(fd, p, int64(w)*blockSize)
						case 2:
							_, err = s.ReadAt(-1, p, 0) // fails with EBADF, for this caller only
							if errors.Is(err, unix.EBADF) {
								err = nil
							}
						case 3:
							err = s.nop()
						}
						if errors.Is(err, ErrClosed) {
							closed.Add(1)
							return
						}
						if err != nil {
							t.Errorf("worker %d op %d: %v", w, i, err)
							return
						}
						ok.Add(1)
					}
				}(w)
			}
			time.Sleep(30 * time.Millisecond)
			require.NoError(t, s.Close())
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("callers hang after Close")
			}
			require.Positive(t, ok.Load())
			require.Equal(t, int64(workers), closed.Load())
			// The loop goroutine is gone. (Polled here: testify's
			// Eventually would count its own goroutine.)
			deadline := time.Now().Add(2 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				stacks := make([]byte, 1<<20)
				t.Fatalf("goroutines leaked: %d before, %d after\n%s", before, n, stacks[:runtime.Stack(stacks, true)])
			}
		})
	}
}

// An idle scheduler sleeps in the kernel: no busy polling, no timers. The
// process's CPU time over an idle second after load stays near zero (1% of
// a core at most). DISKIO_IDLE=10s watches longer.
func TestIdleCostsNothing(t *testing.T) {
	window := time.Second
	if v := os.Getenv("DISKIO_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "DISKIO_IDLE")
		window = d
	}
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{NoInline: true})
			f := testenv.DirectFile(t)
			buf := testenv.AlignedBuf(t, 16*blockSize)
			var wg sync.WaitGroup
			for g := 0; g < 16; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					p := buf[g*blockSize : (g+1)*blockSize]
					for i := 0; i < 200; i++ {
						if _, err := s.WriteAt(int(f.Fd()), p, int64(g)*blockSize); err != nil {
							t.Error(err)
							return
						}
					}
				}(g)
			}
			wg.Wait()
			time.Sleep(50 * time.Millisecond) // past any spin
			var r0, r1 unix.Rusage
			require.NoError(t, unix.Getrusage(unix.RUSAGE_SELF, &r0))
			time.Sleep(window)
			require.NoError(t, unix.Getrusage(unix.RUSAGE_SELF, &r1))
			used := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
			t.Logf("CPU over %v idle: %v (%.3f%% of a core)", window, used, 100*float64(used)/float64(window))
			require.Less(t, used, window/100, "idle scheduler used %v of CPU in %v", used, window)
		})
	}
}

// Requests that arrive just as the loop goes to sleep must wake it: callers
// pause for random short times (around the spin time) between requests, so
// the handshake between a producer and a falling-asleep loop is exercised
// thousands of times. A lost wake-up shows as a caller stuck for seconds.
func TestNoLostWakeups(t *testing.T) {
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{NoInline: true, Spin: 5 * time.Microsecond})
			f := testenv.DirectFile(t)
			const workers, rounds = 8, 500
			buf := testenv.AlignedBuf(t, workers*blockSize)
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					rng := bench.NewRand(uint64(w))
					p := buf[w*blockSize : (w+1)*blockSize]
					for i := 0; i < rounds; i++ {
						time.Sleep(time.Duration(rng.Next()%40) * time.Microsecond)
						start := time.Now()
						if _, err := s.WriteAt(int(f.Fd()), p, int64(w)*blockSize); err != nil {
							t.Error(err)
							return
						}
						if d := time.Since(start); d > 5*time.Second {
							t.Errorf("request took %v: lost wake-up", d)
							return
						}
					}
				}(w)
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				stacks := make([]byte, 1<<20)
				t.Fatalf("callers stuck: lost wake-up\n%s", stacks[:runtime.Stack(stacks, true)])
			}
		})
	}
}

// The start-up chain falls back from uring to aio and keeps the reason.
func TestFallbackChainKeepsReason(t *testing.T) {
	// Under a filter that refuses io_uring, TestFallbackUnderSeccomp checks the fallback.
	testenv.SkipIfRefused(t, "uring", "io_uring_setup's EINVAL")
	t.Setenv("DISKIO_BACKEND", "blocking") // New reads no environment
	// Setup flags no kernel knows make io_uring_setup fail with EINVAL.
	s, err := New(Options{SetupFlags: 1 << 30})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, AIO, s.Backend())
	require.Contains(t, s.FallbackReason(), "uring: io_uring_setup: invalid argument")

	_, err = New(Options{Backend: URing, SetupFlags: 1 << 30})
	require.ErrorIs(t, err, unix.EINVAL)

	_, err = New(Options{Backend: "spdk"})
	require.ErrorContains(t, err, `unknown backend "spdk"`)
}

// DISKIO_BACKEND reaches the Options Default starts with (OptionsFromEnv)
// and nothing else: New ignores it.
func TestBackendFromEnvironment(t *testing.T) {
	t.Setenv("DISKIO_IOWQ_MAX_WORKERS", "")
	for _, b := range backends {
		t.Setenv("DISKIO_BACKEND", string(b))
		opts, err := OptionsFromEnv()
		require.NoError(t, err)
		require.Equal(t, Options{Backend: b}, opts)
		s, err := New(opts)
		if err != nil {
			testenv.Unavailable(t, string(b), err)
		}
		require.Equal(t, b, s.Backend())
		require.Empty(t, s.FallbackReason())
		require.NoError(t, s.Close())
	}
	t.Setenv("DISKIO_BACKEND", "")
	opts, err := OptionsFromEnv()
	require.NoError(t, err)
	require.Equal(t, Options{}, opts)

	t.Setenv("DISKIO_BACKEND", "nonsense")
	_, err = OptionsFromEnv()
	require.ErrorContains(t, err, `DISKIO_BACKEND="nonsense"`)
	s, err := New(Options{NoInline: true})
	require.NoError(t, err, "New read DISKIO_BACKEND")
	require.NoError(t, s.Close())
}

func TestDefaultIsShared(t *testing.T) {
	s1, err := Default()
	require.NoError(t, err)
	s2, err := Default()
	require.NoError(t, err)
	require.Same(t, s1, s2)
	require.NoError(t, s1.nop())
}
