//go:build linux

package diskio

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

// injector is a sched.FaultInjector for File tests: fn decides, every
// attempt is logged with the time it was submitted.
type injector struct {
	mu  sync.Mutex
	log []attempt
	fn  func(a sched.Attempt, nth int) sched.Fault // nth: attempts of this Op so far
}

type attempt struct {
	sched.Attempt
	at int64 // sched.Now() at submission
}

func (in *injector) Fault(a sched.Attempt) sched.Fault {
	in.mu.Lock()
	nth := 0
	for _, b := range in.log {
		if b.Op == a.Op {
			nth++
		}
	}
	in.log = append(in.log, attempt{a, sched.Now()})
	fn := in.fn
	in.mu.Unlock()
	if fn == nil {
		return sched.Fault{}
	}
	return fn(a, nth)
}

func (in *injector) attempts(ops ...sched.Op) []attempt {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []attempt
	for _, a := range in.log {
		for _, op := range ops {
			if a.Op == op {
				out = append(out, a)
			}
		}
	}
	return out
}

// faultSched starts a scheduler (io_uring, else AIO) with in as its fault
// injector, closed at the end of the test.
func faultSched(t *testing.T, in sched.FaultInjector) *sched.Scheduler {
	t.Helper()
	s, err := sched.New(sched.Options{Backend: sched.URing, Faults: in})
	if err != nil {
		testenv.Unavailable(t, "uring", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openWith(t *testing.T, path string, flag int, opts ...Option) *File {
	t.Helper()
	f, err := OpenFile(path, flag, 0o644, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// fdFlags reads the open flags of fd as the kernel has them.
func fdFlags(t *testing.T, fd uintptr) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(int(fd)))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			require.NoError(t, err)
			return int(n)
		}
	}
	t.Fatal("no flags in fdinfo")
	return 0
}

// TestOpenSyncFlagsKept: O_DSYNC and O_SYNC given to OpenFile stay on both
// descriptors: Fd's, as opened, and the second, O_DIRECT one the File's
// reads and block writes use (F_SETFL cannot add them).
func TestOpenSyncFlagsKept(t *testing.T) {
	dir := t.TempDir()
	for _, acc := range []int{os.O_RDWR, os.O_WRONLY} {
		for _, sf := range []int{unix.O_DSYNC, unix.O_SYNC} {
			path := filepath.Join(dir, "f"+strconv.Itoa(acc)+strconv.Itoa(sf))
			f := openWith(t, path, acc|os.O_CREATE|sf)
			got := fdFlags(t, f.Fd())
			require.Equal(t, sf, got&unix.O_SYNC, "sync flags of %s", path)
			require.Zero(t, got&unix.O_DIRECT, "Fd is the descriptor as opened")
			got = fdFlags(t, uintptr(f.dataFd))
			require.Equal(t, sf, got&unix.O_SYNC, "sync flags of the direct descriptor of %s", path)
			if f.Direct() {
				require.NotZero(t, got&unix.O_DIRECT)
			}
			data := randomBytes(10000, 7)
			_, err := f.WriteAt(data, 100)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			onDisk, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, data, onDisk[100:])
		}
	}
}

// TestWriteAtDSync: a WriteAtDSync in one piece carries RWF_DSYNC to the
// kernel; one in several pieces (whole pages direct, an edge page through
// the page cache) writes them plainly and then flushes once; the bytes
// land; plain WriteAt's carry no flag and flush nothing.
func TestWriteAtDSync(t *testing.T) {
	in := &injector{}
	s := faultSched(t, in)
	path := filepath.Join(t.TempDir(), "dsync")
	f := openWith(t, path, os.O_RDWR|os.O_CREATE, WithScheduler(s), WithDirect(Direct))
	want := randomBytes(3*4096+100, 9)
	n, err := f.WriteAtDSync(want[:8192], 0)
	require.NoError(t, err)
	require.Equal(t, 8192, n)
	ws := in.attempts(sched.OpWrite)
	require.NotEmpty(t, ws)
	require.Equal(t, uint32(unix.RWF_DSYNC), ws[len(ws)-1].Flags)
	flushes := len(in.attempts(sched.OpFdatasync))
	before := len(ws)
	n, err = f.WriteAtDSync(want[8192:], 8192) // a whole page direct, then an edge page buffered
	require.NoError(t, err)
	require.Equal(t, len(want)-8192, n)
	ws = in.attempts(sched.OpWrite)
	require.Len(t, ws, before+2)
	require.Zero(t, ws[len(ws)-2].Flags)
	require.Zero(t, ws[len(ws)-1].Flags)
	require.Len(t, in.attempts(sched.OpFdatasync), flushes+1)
	_, err = f.WriteAtDSync([]byte("edge"), 20000) // one edge page: one durable write
	require.NoError(t, err)
	ws = in.attempts(sched.OpWrite)
	require.Equal(t, uint32(unix.RWF_DSYNC), ws[len(ws)-1].Flags)
	require.Len(t, in.attempts(sched.OpFdatasync), flushes+1)
	want = append(want, make([]byte, 20000-len(want))...)
	want = append(want, "edge"...)
	_, err = f.WriteAt([]byte("x"), 0)
	require.NoError(t, err)
	ws = in.attempts(sched.OpWrite)
	require.Zero(t, ws[len(ws)-1].Flags)
	require.Len(t, in.attempts(sched.OpFdatasync), flushes+1)
	want[0] = 'x'
	require.NoError(t, f.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// TestPreallocate: with and without FALLOC_FL_KEEP_SIZE, space is
// reserved (st_blocks), the size changes only without it, and appends
// into the reserved space read back.
func TestPreallocate(t *testing.T) {
	dir := t.TempDir()
	for _, keep := range []bool{false, true} {
		path := filepath.Join(dir, "p"+strconv.FormatBool(keep))
		f := openWith(t, path, os.O_RDWR|os.O_CREATE)
		_, err := f.WriteAt([]byte("head"), 0)
		require.NoError(t, err)
		if keep {
			require.NoError(t, f.PreallocateKeepSize(0, 1<<20))
		} else {
			require.NoError(t, f.Preallocate(0, 1<<20))
		}
		var st unix.Stat_t
		require.NoError(t, unix.Stat(path, &st))
		require.GreaterOrEqual(t, st.Blocks*512, int64(1<<20), "space reserved")
		fi, err := f.Stat()
		require.NoError(t, err)
		wantSize := int64(1 << 20)
		if keep {
			wantSize = 4
		}
		require.Equal(t, wantSize, fi.Size())
		tail := randomBytes(5000, 4)
		_, err = f.WriteAt(tail, fi.Size())
		require.NoError(t, err)
		require.NoError(t, f.Datasync())
		require.NoError(t, f.Close())
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, wantSize+5000, int64(len(got)))
		require.Equal(t, "head", string(got[:4]))
		require.Equal(t, tail, got[wantSize:])
	}
}

func TestPreallocateBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p")
	require.NoError(t, os.WriteFile(path, []byte("abc"), 0o644))
	f := openWith(t, path, os.O_RDWR)
	for _, c := range [][2]int64{{-1, 10}, {0, 0}, {0, -5}, {1, maxOffset}} {
		for _, fn := range []func(int64, int64) error{f.Preallocate, f.PreallocateKeepSize} {
			err := fn(c[0], c[1])
			var pe *fs.PathError
			require.ErrorAs(t, err, &pe, "%v", c)
			require.ErrorIs(t, err, syscall.EINVAL)
			require.Equal(t, path, pe.Path)
		}
	}
	ro := openWith(t, path, os.O_RDONLY)
	require.ErrorIs(t, ro.Preallocate(0, 4096), syscall.EBADF)
	require.ErrorIs(t, ro.PreallocateKeepSize(0, 4096), syscall.EBADF)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "abc", string(got))
}

func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), nil, 0o644))
	require.NoError(t, os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b")))
	require.NoError(t, SyncDir(dir))
	err := SyncDir(filepath.Join(dir, "b"))
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, syscall.ENOTDIR)
	require.ErrorIs(t, SyncDir(filepath.Join(dir, "none")), fs.ErrNotExist)
}

// TestGroupCommitCovers: concurrent committers share flushes, and each is
// released only by a successful flush issued after it called, which
// completed before it returned. Each flush takes at least a millisecond,
// as a disk's does, so that committers arrive while one is in flight
// however loaded the machine is (a tmpfs or a disk with a write cache
// flushes in microseconds).
func TestGroupCommitCovers(t *testing.T) {
	in := &injector{fn: func(a sched.Attempt, _ int) sched.Fault {
		if a.Op == sched.OpFsync || a.Op == sched.OpFdatasync {
			return sched.Fault{Delay: time.Millisecond}
		}
		return sched.Fault{}
	}}
	s := faultSched(t, in)
	f := openWith(t, filepath.Join(t.TempDir(), "gc"), os.O_RDWR|os.O_CREATE, WithScheduler(s))
	const writers, rounds = 32, 4
	type call struct{ start, end int64 }
	calls := make([]call, writers*rounds)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := randomBytes(4096, byte(g))
			for r := range rounds {
				if _, err := f.WriteAt(buf, int64(r*writers+g)*4096); err != nil {
					t.Error(err)
					return
				}
				c := &calls[r*writers+g]
				c.start = sched.Now()
				var err error
				if g%4 == 0 {
					err = f.Sync()
				} else {
					err = f.Datasync()
				}
				c.end = sched.Now()
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	flushes := in.attempts(sched.OpFsync, sched.OpFdatasync)
	t.Logf("%d commits, %d flushes", len(calls), len(flushes))
	require.Less(t, len(flushes), len(calls)/2, "flushes were not shared")
	for i, c := range calls {
		covered := false
		for _, fl := range flushes {
			if fl.at >= c.start && fl.at <= c.end {
				covered = true
			}
		}
		require.True(t, covered, "commit %d returned without a flush issued during its call", i)
	}
}

// TestGroupCommitLateWrite: a write that completes after a flush was
// issued is not covered by it: a Sync called after that write waits for a
// later flush, issued after the write completed, even though the first
// one (slowed down) completes in between. Callers that arrive during the
// slow flush share the flushes issued after it (maxFlushes in flight).
func TestGroupCommitLateWrite(t *testing.T) {
	in := &injector{fn: func(a sched.Attempt, nth int) sched.Fault {
		if a.Op == sched.OpFdatasync {
			// The first flush is slow; the later ones take long
			// enough that callers must share them to keep up.
			return sched.Fault{Delay: map[bool]time.Duration{true: 150 * time.Millisecond, false: 20 * time.Millisecond}[nth == 0]}
		}
		return sched.Fault{}
	}}
	s := faultSched(t, in)
	f := openWith(t, filepath.Join(t.TempDir(), "late"), os.O_RDWR|os.O_CREATE, WithScheduler(s))
	first := make(chan error)
	go func() { first <- f.Datasync() }()
	for len(in.attempts(sched.OpFdatasync)) == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err := f.WriteAt(randomBytes(4096, 1), 0)
	require.NoError(t, err)
	written := sched.Now()
	const late = 8
	ends := make(chan int64, late)
	for range late {
		go func() {
			if err := f.Datasync(); err != nil {
				t.Error(err)
			}
			ends <- sched.Now()
		}()
	}
	require.NoError(t, <-first)
	for range late {
		end := <-ends
		fl := in.attempts(sched.OpFdatasync)
		require.LessOrEqual(t, len(fl), 1+maxFlushes, "the late callers share flushes")
		for _, f := range fl[1:] {
			require.Greater(t, f.at, written, "later flushes issued after the write completed")
		}
		require.Greater(t, end, fl[1].at)
	}
}

// TestSyncFailureSticky: after a failed flush every Sync, Datasync, write
// and Preallocate returns that first error, even though the device would
// now report success, and no further flush is issued; the callers that
// shared the failed flush all get it.
func TestSyncFailureSticky(t *testing.T) {
	in := &injector{fn: func(a sched.Attempt, nth int) sched.Fault {
		switch {
		case a.Op == sched.OpFdatasync && nth == 0:
			return sched.Fault{Errno: unix.EIO, Delay: 50 * time.Millisecond}
		case a.Op == sched.OpFsync || a.Op == sched.OpFdatasync:
			// Flushes beside it take a while too, so the Syncs
			// made meanwhile share them.
			return sched.Fault{Delay: 20 * time.Millisecond}
		}
		return sched.Fault{}
	}}
	s := faultSched(t, in)
	path := filepath.Join(t.TempDir(), "sticky")
	f := openWith(t, path, os.O_RDWR|os.O_CREATE, WithScheduler(s))
	_, err := f.WriteAt([]byte("durable?"), 0)
	require.NoError(t, err)
	errs := make(chan error, 4)
	go func() { errs <- f.Datasync() }()
	for len(in.attempts(sched.OpFdatasync)) == 0 {
		time.Sleep(time.Millisecond)
	}
	for range 3 { // these get flushes issued beside or after the failing one: ordered release gives them its error
		go func() { errs <- f.Sync() }()
	}
	first := <-errs
	var pe *fs.PathError
	require.ErrorAs(t, first, &pe)
	require.Equal(t, "datasync", pe.Op)
	require.Equal(t, path, pe.Path)
	require.ErrorIs(t, first, syscall.EIO)
	for range 3 {
		require.Same(t, first, <-errs)
	}
	// Flushes issued beside the failing one, before it failed, ran;
	// none is issued once the failure is known.
	flushes := len(in.attempts(sched.OpFsync, sched.OpFdatasync))
	require.LessOrEqual(t, flushes, 1+maxFlushes)
	require.Same(t, first, f.Sync())
	require.Same(t, first, f.Datasync())
	n, err := f.WriteAt([]byte("more"), 100)
	require.Zero(t, n)
	require.Same(t, first, err)
	n, err = f.Write([]byte("more"))
	require.Zero(t, n)
	require.Same(t, first, err)
	n, err = f.WriteAtDSync([]byte("more"), 100)
	require.Zero(t, n)
	require.Same(t, first, err)
	require.Same(t, first, f.Preallocate(0, 4096))
	require.Len(t, in.attempts(sched.OpFsync, sched.OpFdatasync), flushes)
	// Reads still work; the data written is as it was.
	got := make([]byte, 8)
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, "durable?", string(got))
}

// TestDroppedFlushLooksFine: a flush the device drops reports success and
// poisons nothing: no software can tell, which is why a real power cut
// (the diskchecker method in internal/crash) is the only test of a drive.
func TestDroppedFlushLooksFine(t *testing.T) {
	var dropped atomic.Int32
	in := &injector{fn: func(a sched.Attempt, nth int) sched.Fault {
		if a.Op == sched.OpFsync {
			dropped.Add(1)
			return sched.Fault{Drop: true}
		}
		return sched.Fault{}
	}}
	s := faultSched(t, in)
	f := openWith(t, filepath.Join(t.TempDir(), "drop"), os.O_RDWR|os.O_CREATE, WithScheduler(s))
	_, err := f.WriteAt([]byte("x"), 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.EqualValues(t, 1, dropped.Load())
	require.NoError(t, f.Sync())
}

func TestWriteAtDSyncBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b")
	require.NoError(t, os.WriteFile(path, []byte("abc"), 0o644))
	f := openWith(t, path, os.O_RDWR)
	_, err := f.WriteAtDSync([]byte("x"), -1)
	require.ErrorAs(t, err, new(*fs.PathError))
	n, err := f.WriteAtDSync(nil, 0)
	require.NoError(t, err)
	require.Zero(t, n)
	ro := openWith(t, path, os.O_RDONLY)
	_, err = ro.WriteAtDSync([]byte("x"), 0)
	require.ErrorIs(t, err, syscall.EBADF)
	ap := openWith(t, path, os.O_RDWR|os.O_APPEND)
	_, err = ap.WriteAtDSync([]byte("x"), 0)
	require.Error(t, err)
	require.NoError(t, f.Close())
	_, err = f.WriteAtDSync([]byte("x"), 0)
	require.ErrorIs(t, err, os.ErrClosed)
	require.ErrorIs(t, f.PreallocateKeepSize(0, 10), os.ErrClosed)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal([]byte("abc"), got))
	require.False(t, errors.Is(err, os.ErrClosed))
}

// TestFlushRefusedNotSticky: a flush refused before it reached the kernel
// (its scheduler closed) poisons nothing: each later call reports its own
// os.ErrClosed, with its own Op, not the first flush's error for ever.
// A failure of the flush itself stays sticky (TestSyncFailureSticky).
func TestFlushRefusedNotSticky(t *testing.T) {
	for _, b := range []sched.Backend{sched.URing, sched.AIO, sched.Blocking} {
		for _, m := range openModes {
			t.Run(string(b)+"/"+m.name, func(t *testing.T) {
				s, err := sched.New(sched.Options{Backend: b})
				if err != nil {
					testenv.Unavailable(t, string(b), err)
				}
				path := filepath.Join(t.TempDir(), "f")
				f := openWith(t, path, os.O_RDWR|os.O_CREATE, WithScheduler(s), WithDirect(m.mode))
				_, err = f.WriteAt([]byte("not yet durable"), 0)
				require.NoError(t, err)
				require.NoError(t, s.Close())
				for _, c := range []struct {
					op string
					fn func() error
				}{
					{"sync", f.Sync},
					{"datasync", f.Datasync},
					{"write", func() error { _, err := f.WriteAt([]byte("x"), 0); return err }},
					{"write", func() error { _, err := f.Write([]byte("x")); return err }},
					{"write", func() error { _, err := f.WriteAtDSync([]byte("x"), 0); return err }},
					{"preallocate", func() error { return f.Preallocate(0, 4096) }},
					{"sync", f.Sync},
				} {
					err := c.fn()
					var pe *fs.PathError
					require.ErrorAs(t, err, &pe)
					require.Equal(t, c.op, pe.Op, "%v", err)
					require.Equal(t, path, pe.Path)
					require.ErrorIs(t, err, os.ErrClosed)
				}
				require.NoError(t, f.flush.failed())
			})
		}
	}
}

// TestFlushGroupUncontended: a flush with nothing else under way
// allocates nothing (the group's own round, no channel), and a round
// issued while it is in flight still waits for it and takes its failure.
func TestFlushGroupUncontended(t *testing.T) {
	var g flushGroup
	ok := func(bool) (bool, error) { return false, nil }
	allocs := testing.AllocsPerRun(100, func() {
		if err := g.sync(false, ok); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs, "allocations per uncontended flush")

	failing := errors.New("flush failed")
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error)
	go func() {
		first <- g.sync(true, func(bool) (bool, error) {
			close(started)
			<-release
			return true, failing
		})
	}()
	<-started
	second := make(chan error)
	go func() { second <- g.sync(false, ok) }() // issued beside the first: maxFlushes is 2
	select {
	case err := <-second:
		t.Fatalf("a later round returned (%v) before the round issued before it", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	require.Same(t, failing, <-first)
	require.Same(t, failing, <-second)
	require.Same(t, failing, g.sync(false, ok))
}
