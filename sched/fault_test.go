//go:build linux

package sched

import (
	"bytes"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
	"github.com/diskio-go/diskio/internal/testenv"
)

// faultLog is a FaultInjector driven by a function, recording attempts.
type faultLog struct {
	mu       sync.Mutex
	attempts []Attempt
	fn       func(Attempt) Fault
}

func (l *faultLog) Fault(a Attempt) Fault {
	l.mu.Lock()
	l.attempts = append(l.attempts, a)
	l.mu.Unlock()
	return l.fn(a)
}

func (l *faultLog) count(op Op) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.attempts {
		if a.Op == op {
			n++
		}
	}
	return n
}

var faultBackends = []Backend{URing, AIO, Blocking}

// TestFaultsRetriedTransparently: EAGAIN, EINTR and short transfers on
// the first attempts of every read and write are invisible to callers,
// and the bytes are right.
func TestFaultsRetriedTransparently(t *testing.T) {
	for _, b := range faultBackends {
		t.Run(string(b), func(t *testing.T) {
			inj := &faultLog{fn: func(a Attempt) Fault {
				if a.Op != OpRead && a.Op != OpWrite {
					return Fault{}
				}
				switch a.Retry {
				case 0:
					return Fault{Errno: unix.EAGAIN}
				case 1:
					return Fault{Errno: unix.EINTR}
				case 2:
					return Fault{Short: blockSize} // then the rest
				}
				return Fault{}
			}}
			s := newSched(t, b, Options{Faults: inj})
			f := testenv.DirectFile(t)
			const n = 8
			var wg sync.WaitGroup
			for g := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w := testenv.AlignedBuf(t, 4*blockSize)
					fill(w, g)
					k, err := s.WriteAt(int(f.Fd()), w, int64(g)*4*blockSize)
					if err != nil || k != len(w) {
						t.Errorf("write %d: %d, %v", g, k, err)
						return
					}
					r := testenv.AlignedBuf(t, 4*blockSize)
					k, err = s.ReadAt(int(f.Fd()), r, int64(g)*4*blockSize)
					if err != nil || k != len(r) || !bytes.Equal(r, w) {
						t.Errorf("read %d: %d, %v, equal %v", g, k, err, bytes.Equal(r, w))
					}
				}()
			}
			wg.Wait()
			// Each request: EAGAIN, EINTR, short, rest = 4 attempts.
			require.Equal(t, 4*n, inj.count(OpWrite))
			require.Equal(t, 4*n, inj.count(OpRead))
		})
	}
}

// TestFaultsReachTheirCaller: an injected EIO or ENOSPC fails exactly the
// request it hit, as the bare errno (the caller knows its offset); the
// others succeed.
func TestFaultsReachTheirCaller(t *testing.T) {
	for _, b := range faultBackends {
		t.Run(string(b), func(t *testing.T) {
			bad := map[int64]unix.Errno{3 * blockSize: unix.EIO, 5 * blockSize: unix.ENOSPC}
			inj := &faultLog{fn: func(a Attempt) Fault {
				if a.Op == OpWrite {
					return Fault{Errno: bad[a.Off]}
				}
				return Fault{}
			}}
			s := newSched(t, b, Options{Faults: inj})
			f := testenv.DirectFile(t)
			var wg sync.WaitGroup
			for i := range int64(8) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w := testenv.AlignedBuf(t, blockSize)
					_, err := s.WriteAt(int(f.Fd()), w, i*blockSize)
					want := bad[i*blockSize]
					if want == 0 {
						if err != nil {
							t.Errorf("write at block %d: %v", i, err)
						}
						return
					}
					if err != want {
						t.Errorf("write at block %d: got %#v, want the bare %v", i, err, want)
					}
				}()
			}
			wg.Wait()
		})
	}
}

// TestFaultsDropAndDelay: a dropped flush reports success without reaching
// the kernel; a delayed completion arrives no sooner than its delay, while
// other requests complete meanwhile.
func TestFaultsDropAndDelay(t *testing.T) {
	for _, b := range faultBackends {
		t.Run(string(b), func(t *testing.T) {
			// Long enough that ten reads finish inside it even on a
			// loaded machine: the test checks order, not speed.
			const delay = time.Second
			var slow atomic.Bool
			inj := &faultLog{fn: func(a Attempt) Fault {
				switch {
				case a.Op == OpFdatasync:
					return Fault{Drop: true}
				case a.Op == OpRead && a.Off == 0 && slow.CompareAndSwap(false, true):
					return Fault{Delay: delay}
				}
				return Fault{}
			}}
			s := newSched(t, b, Options{Faults: inj})
			f := testenv.DirectFile(t)
			require.NoError(t, s.Fdatasync(int(f.Fd())))
			require.Equal(t, 1, inj.count(OpFdatasync))

			w := testenv.AlignedBuf(t, 2*blockSize)
			_, err := s.WriteAt(int(f.Fd()), w, 0)
			require.NoError(t, err)
			start := time.Now()
			done := make(chan time.Duration)
			go func() {
				_, err := s.ReadAt(int(f.Fd()), testenv.AlignedBuf(t, blockSize), 0)
				if err != nil {
					t.Error(err)
				}
				done <- time.Since(start)
			}()
			for inj.count(OpRead) == 0 {
				time.Sleep(time.Millisecond)
			}
			// Meanwhile, other reads go through.
			for range 10 {
				_, err := s.ReadAt(int(f.Fd()), testenv.AlignedBuf(t, blockSize), blockSize)
				require.NoError(t, err)
			}
			select {
			case <-done:
				t.Fatal("reads waited for the delayed one")
			default:
			}
			require.GreaterOrEqual(t, <-done, delay)
		})
	}
}

// TestFaultsEAGAINBounded: a request whose every attempt says EAGAIN fails
// with EAGAIN after sys.AgainLimit attempts, on every path it can take (the
// queue, the caller's thread), instead of being resubmitted for ever.
func TestFaultsEAGAINBounded(t *testing.T) {
	for _, b := range faultBackends {
		for _, noInline := range []bool{false, true} {
			if b == Blocking && noInline {
				continue // every request is its caller's there
			}
			t.Run(string(b)+map[bool]string{false: "", true: "/NoInline"}[noInline], func(t *testing.T) {
				inj := &faultLog{fn: func(a Attempt) Fault {
					if a.Op == OpWrite || a.Op == OpFdatasync {
						return Fault{Errno: unix.EAGAIN}
					}
					return Fault{}
				}}
				s := newSched(t, b, Options{Faults: inj, NoInline: noInline})
				f := testenv.DirectFile(t)
				w := testenv.AlignedBuf(t, blockSize)
				done := make(chan struct{})
				var n int
				var werr, serr error
				go func() {
					defer close(done)
					n, werr = s.WriteAt(int(f.Fd()), w, 0)
					serr = s.Fdatasync(int(f.Fd()))
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("a request refused with EAGAIN on every attempt is still being retried after 10s")
				}
				require.Zero(t, n)
				require.Equal(t, unix.EAGAIN, werr)
				require.ErrorIs(t, serr, unix.EAGAIN)
				require.Equal(t, sys.AgainLimit, inj.count(OpWrite))
				require.Equal(t, sys.AgainLimit, inj.count(OpFdatasync))
				inj.mu.Lock()
				paths := map[Path]bool{}
				for _, a := range inj.attempts {
					paths[a.Path] = true
				}
				inj.mu.Unlock()
				t.Logf("paths taken: %v", paths)
				if noInline {
					require.Equal(t, map[Path]bool{PathQueue: true}, paths)
				} else {
					// One goroutine: the scheduler is idle at each call.
					require.Equal(t, map[Path]bool{PathCaller: true}, paths)
				}
			})
		}
	}
}

// kernelLog is a sysCaller that records the calls reaching it, as the
// kernel would get them (raw or not).
type kernelLog struct {
	inner sysCaller
	mu    sync.Mutex
	calls []sysCall // without their buffers
}

func (k *kernelLog) call(c sysCall) (int, error) {
	k.mu.Lock()
	logged := c
	logged.buf = nil
	k.calls = append(k.calls, logged)
	k.mu.Unlock()
	return k.inner.call(c)
}

func (k *kernelLog) made() []sysCall {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]sysCall(nil), k.calls...)
}

// underFaults puts a kernelLog between s's fault decorator and the
// kernel, before s serves anything.
func underFaults(t *testing.T, s *Scheduler) *kernelLog {
	t.Helper()
	fc, ok := s.calls.(*faultCaller)
	require.True(t, ok, "Options.Faults decorates the callers' system calls: %T", s.calls)
	k := &kernelLog{inner: fc.inner}
	fc.inner = k
	return k
}

// TestFaultsReachPageCacheHits: a read the page cache holds, made while
// the File's reads hit, is a raw preadv2(RWF_NOWAIT) under faults as
// without them, and the injector sees each attempt on PathPageCache:
// Short shortens the raw call, Errno fails it before the kernel.
func TestFaultsReachPageCacheHits(t *testing.T) {
	const size = 4 * blockSize
	content := make([]byte, size)
	fill(content, 3)
	path := t.TempDir() + "/cached"
	require.NoError(t, os.WriteFile(path, content, 0o644))
	osf, err := os.Open(path)
	require.NoError(t, err)
	defer osf.Close()
	_, err = io.ReadFull(osf, make([]byte, size)) // now cached
	require.NoError(t, err)

	var n atomic.Int32
	inj := &faultLog{fn: func(a Attempt) Fault {
		switch n.Add(1) {
		case 2:
			return Fault{Short: blockSize}
		case 3:
			return Fault{Errno: unix.EIO}
		}
		return Fault{}
	}}
	s := newSched(t, Blocking, Options{Faults: inj})
	kernel := underFaults(t, s)
	f, err := s.Open(int(osf.Fd()), path)
	require.NoError(t, err)
	defer f.Close()

	buf := make([]byte, 2*blockSize)
	got, err := f.ReadAtNowait(buf, blockSize) // 1: a hit
	if NowaitRefused(err) || err == unix.EAGAIN {
		t.Skipf("no page-cache hit with RWF_NOWAIT here: %v", err)
	}
	require.NoError(t, err)
	require.Equal(t, len(buf), got)
	require.Equal(t, content[blockSize:3*blockSize], buf)
	require.False(t, f.Missed())

	got, err = f.ReadAtNowait(buf, 0) // 2: shortened
	require.NoError(t, err)
	require.Equal(t, blockSize, got)
	require.Equal(t, content[:blockSize], buf[:got])

	got, err = f.ReadAtNowait(buf, 0) // 3: failed before the kernel
	require.Equal(t, unix.EIO, err)
	require.Zero(t, got)

	inj.mu.Lock()
	attempts := append([]Attempt(nil), inj.attempts...)
	inj.mu.Unlock()
	require.Len(t, attempts, 3)
	for _, a := range attempts {
		require.Equal(t, PathPageCache, a.Path)
		require.Equal(t, OpRead, a.Op)
		require.Equal(t, uint32(unix.RWF_NOWAIT), a.Flags&unix.RWF_NOWAIT)
		require.Equal(t, len(buf), a.Len)
	}
	made := kernel.made()
	require.Len(t, made, 2, "the injected EIO made no system call")
	for _, c := range made {
		require.True(t, c.raw(), "a hit under faults is the raw call production makes: %+v", c)
		require.Equal(t, SysPreadv2, c.syscall())
	}
}

// TestFaultsReachInMemoryCopies: a File on tmpfs is read and written by a
// copy on its caller, without a request, under faults as without them;
// the injector sees each attempt on PathCaller, and a short transfer is
// continued by the copy itself.
func TestFaultsReachInMemoryCopies(t *testing.T) {
	const dir = "/dev/shm"
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skipf("%s is not a tmpfs (%v)", dir, err)
	}
	osf, err := os.CreateTemp(dir, "diskio-copy-")
	require.NoError(t, err)
	t.Cleanup(func() { osf.Close(); os.Remove(osf.Name()) })
	content := make([]byte, 4*blockSize)
	fill(content, 5)
	_, err = osf.WriteAt(content, 0)
	require.NoError(t, err)

	inj := &faultLog{fn: func(a Attempt) Fault {
		if a.Retry == 0 {
			return Fault{Short: blockSize}
		}
		return Fault{}
	}}
	s := newSched(t, Blocking, Options{Faults: inj})
	kernel := underFaults(t, s)
	f, err := s.Open(int(osf.Fd()), osf.Name())
	require.NoError(t, err)
	defer f.Close()
	require.True(t, f.inMemory)

	buf := make([]byte, 2*blockSize)
	got, err := f.ReadAt(buf, blockSize)
	require.NoError(t, err)
	require.Equal(t, len(buf), got)
	require.Equal(t, content[blockSize:3*blockSize], buf)
	w := make([]byte, 2*blockSize)
	fill(w, 6)
	got, err = f.WriteAt(w, 2*blockSize)
	require.NoError(t, err)
	require.Equal(t, len(w), got)

	require.Zero(t, s.Stats().Inline, "no request: the copies served both")
	inj.mu.Lock()
	attempts := append([]Attempt(nil), inj.attempts...)
	inj.mu.Unlock()
	want := []Attempt{
		{Op: OpRead, Fd: int32(osf.Fd()), Off: blockSize, Len: 2 * blockSize, Retry: 0, Path: PathCaller},
		{Op: OpRead, Fd: int32(osf.Fd()), Off: 2 * blockSize, Len: blockSize, Retry: 1, Path: PathCaller},
		{Op: OpWrite, Fd: int32(osf.Fd()), Off: 2 * blockSize, Len: 2 * blockSize, Retry: 0, Path: PathCaller},
		{Op: OpWrite, Fd: int32(osf.Fd()), Off: 3 * blockSize, Len: blockSize, Retry: 1, Path: PathCaller},
	}
	require.Equal(t, want, attempts)
	var calls []Syscall
	var raw []bool
	for _, c := range kernel.made() {
		calls = append(calls, c.syscall())
		raw = append(raw, c.raw())
	}
	require.Equal(t, []Syscall{SysPread, SysPread, SysPwrite, SysPwrite}, calls)
	// Reads are raw system calls where nothing can swap the file's
	// pages out; writes never are (they may allocate memory).
	var si unix.Sysinfo_t
	require.NoError(t, unix.Sysinfo(&si))
	require.Equal(t, si.Totalswap == 0, f.rawReads)
	require.Equal(t, []bool{f.rawReads, f.rawReads, false, false}, raw)
	back, err := os.ReadFile(osf.Name())
	require.NoError(t, err)
	require.Equal(t, w, back[2*blockSize:])
}
