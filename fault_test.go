//go:build linux

package diskio

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/sched"
)

// noLeaks fails the test if goroutines started during it are still alive
// after its cleanups (the scheduler's loop included) have run. Goroutines
// that end on their own get up to 5s to do so.
func noLeaks(t *testing.T) {
	before := goroutines()
	t.Cleanup(func() {
		var left []string
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			left = left[:0]
			for id, stack := range goroutines() {
				if _, ok := before[id]; !ok && !strings.Contains(stack, "os/signal.signal_recv") {
					left = append(left, stack)
				}
			}
			if len(left) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(left) > 0 {
			t.Errorf("%d goroutines started by the test are still running:\n\n%s", len(left), strings.Join(left, "\n\n"))
		}
	})
}

// goroutines returns the stacks of every goroutine but the caller's, by
// goroutine ID.
func goroutines() map[string]string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := strings.Split(string(buf), "\n\n")
	all := make(map[string]string, len(stacks)-1)
	for _, s := range stacks[1:] { // the first is the caller's
		// "goroutine 42 [chan receive]:"
		id, _, _ := strings.Cut(strings.TrimPrefix(s, "goroutine "), " ")
		all[id] = s
	}
	return all
}

// within fails the test if fn has not returned after d: nothing may hang.
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("still running after %v:\n%s", d, buf[:runtime.Stack(buf, true)])
	}
}

// TestFaultsFileRetried: with EAGAIN, EINTR, short transfers and late
// completions injected into a third of all attempts, concurrent unaligned
// reads, writes and syncs through File all succeed and every byte is right.
func TestFaultsFileRetried(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := map[string]int{}
	in := &injector{fn: func(a sched.Attempt, _ int) sched.Fault {
		mu.Lock()
		defer mu.Unlock()
		if rng.IntN(3) != 0 {
			return sched.Fault{}
		}
		switch k := rng.IntN(4); {
		case k == 0:
			kinds["eagain"]++
			return sched.Fault{Errno: unix.EAGAIN}
		case k == 1:
			kinds["eintr"]++
			return sched.Fault{Errno: unix.EINTR}
		case k == 2 && a.Len >= 8192:
			kinds["short"]++
			return sched.Fault{Short: a.Len / 2 &^ 4095}
		default:
			kinds["late"]++
			return sched.Fault{Delay: time.Duration(rng.IntN(2000)) * time.Microsecond}
		}
	}}
	s := faultSched(t, in)
	path := filepath.Join(t.TempDir(), "retried")
	f := openWith(t, path, os.O_RDWR|os.O_CREATE, WithScheduler(s))
	const workers, region = 8, 40000 // regions share blocks: unaligned edges
	within(t, 30*time.Second, func() {
		var wg sync.WaitGroup
		for g := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 9))
				mine := make([]byte, region)
				base := int64(g*region + 100)
				for i := range 30 {
					off := r.IntN(region - 1)
					n := 1 + r.IntN(min(region-off, 20000))
					p := randomBytes(n, byte(g*31+i))
					if _, err := f.WriteAt(p, base+int64(off)); err != nil {
						t.Errorf("write: %v", err)
						return
					}
					copy(mine[off:], p)
					if i%10 == 9 {
						if err := f.Datasync(); err != nil {
							t.Errorf("datasync: %v", err)
							return
						}
					}
					got := make([]byte, n)
					if _, err := f.ReadAt(got, base+int64(off)); err != nil {
						t.Errorf("read: %v", err)
						return
					}
					if !bytes.Equal(got, mine[off:off+n]) {
						t.Errorf("worker %d: read back differs at %d+%d", g, off, n)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
	mu.Lock()
	t.Logf("injected: %v", kinds)
	for _, k := range []string{"eagain", "eintr", "short", "late"} {
		require.NotZero(t, kinds[k], k)
	}
	mu.Unlock()
}

// TestFaultsFileErrorsReachCaller: an EIO or ENOSPC injected into one
// request reaches exactly the caller whose request it was, as a
// *fs.PathError with the op, the path and (wrapped) the offset; the other
// callers succeed and their data is intact.
func TestFaultsFileErrorsReachCaller(t *testing.T) {
	noLeaks(t)
	const blk = 4096
	bad := map[int64]syscall.Errno{5 * blk: unix.EIO, 9 * blk: unix.ENOSPC}
	in := &injector{fn: func(a sched.Attempt, _ int) sched.Fault {
		if a.Op == sched.OpWrite || a.Op == sched.OpRead {
			return sched.Fault{Errno: bad[a.Off]}
		}
		return sched.Fault{}
	}}
	s := faultSched(t, in)
	path := filepath.Join(t.TempDir(), "errs")
	f := openWith(t, path, os.O_RDWR|os.O_CREATE, WithScheduler(s), WithDirect(Direct))
	const n = 16
	within(t, 20*time.Second, func() {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = f.WriteAt(randomBytes(blk, byte(i)), int64(i)*blk)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			want := bad[int64(i)*blk]
			if want == 0 {
				require.NoError(t, err, "write %d", i)
				continue
			}
			var pe *fs.PathError
			require.ErrorAs(t, err, &pe, "write %d", i)
			require.Equal(t, "write", pe.Op)
			require.Equal(t, path, pe.Path)
			require.ErrorIs(t, err, want)
			var ioe *IOError
			require.ErrorAs(t, err, &ioe)
			require.Equal(t, int64(i)*blk, ioe.Off)
			require.Contains(t, err.Error(), "offset "+strconv.Itoa(i*blk))
		}
	})
	// Reads: the failed block's read fails for its caller only.
	_, err := f.ReadAt(make([]byte, blk), 5*blk)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "read", pe.Op)
	require.ErrorIs(t, err, syscall.EIO)
	for i := range n {
		if bad[int64(i)*blk] != 0 {
			continue
		}
		got := make([]byte, blk)
		_, err := f.ReadAt(got, int64(i)*blk)
		require.NoError(t, err)
		require.Equal(t, randomBytes(blk, byte(i)), got, "block %d", i)
	}
	// Nothing lost: the file still syncs and closes.
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	require.NoError(t, s.Close())
}

// TestFaultsCloseWithLateCompletions: Close of the File and of the
// scheduler while completions are held back waits for them; nothing hangs
// and no goroutine is left behind.
func TestFaultsCloseWithLateCompletions(t *testing.T) {
	noLeaks(t)
	in := &injector{fn: func(a sched.Attempt, _ int) sched.Fault {
		return sched.Fault{Delay: 20 * time.Millisecond}
	}}
	s := faultSched(t, in)
	f := openWith(t, filepath.Join(t.TempDir(), "late"), os.O_RDWR|os.O_CREATE, WithScheduler(s))
	within(t, 20*time.Second, func() {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.WriteAt(randomBytes(100, byte(i)), int64(i)*1000)
				if err != nil && !errors.Is(err, os.ErrClosed) {
					t.Error(err)
				}
			}()
		}
		time.Sleep(5 * time.Millisecond)
		require.NoError(t, f.Close())
		wg.Wait()
		require.NoError(t, s.Close())
	})
}
