//go:build linux

package diskio

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/sys"
	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

// fallbacks is an OnFallback that keeps what it is told.
type fallbacks struct {
	mu   sync.Mutex
	list []sched.Fallback
}

func (fb *fallbacks) add(f sched.Fallback) {
	if f.Path == "" {
		// The scheduler's own (AIO under a seccomp filter that refuses
		// io_uring): these tests are about the files'.
		return
	}
	fb.mu.Lock()
	fb.list = append(fb.list, f)
	fb.mu.Unlock()
}

func (fb *fallbacks) get() []sched.Fallback {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return append([]sched.Fallback(nil), fb.list...)
}

// newTestScheduler is a scheduler of the test's own, closed at cleanup,
// whose fallbacks fb receives.
func newTestScheduler(t *testing.T, fb *fallbacks) *sched.Scheduler {
	s, err := sched.New(sched.Options{OnFallback: fb.add})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// statusFlags is F_GETFL of fd.
func statusFlags(t *testing.T, fd int) int {
	fl, err := sys.Fcntl(fd, unix.F_GETFL, 0)
	require.NoError(t, err)
	return fl
}

// requestsOf counts the reads, writes and syncs s has completed.
func requestsOf(s *sched.Scheduler) (reads, writes, syncs uint64) {
	st := s.Stats()
	r, w := st.Total(sched.OpRead), st.Total(sched.OpWrite)
	fs, fd := st.Total(sched.OpFsync), st.Total(sched.OpFdatasync)
	return r.Requests(), w.Requests(), fs.Requests() + fd.Requests()
}

// writeSyncRead writes data at awkward offsets and lengths through w,
// syncs, evicts the file's pages (so that the reads miss), and reads it all
// back through ReadAt and Read.
func writeSyncRead(t *testing.T, w osLike, data []byte) []byte {
	for off := 0; off < len(data); {
		n := min(len(data)-off, 3000+off%5000)
		m, err := w.WriteAt(data[off:off+n], int64(off))
		require.NoError(t, err)
		require.Equal(t, n, m)
		off += n
	}
	require.NoError(t, w.Sync())
	rc, err := w.SyscallConn()
	require.NoError(t, err)
	require.NoError(t, rc.Control(func(fd uintptr) { unix.Fadvise(int(fd), 0, 0, unix.FADV_DONTNEED) }))
	got := make([]byte, len(data)+100)
	n, err := w.ReadAt(got, 0)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, len(data), n)
	_, err = w.Seek(1234, io.SeekStart)
	require.NoError(t, err)
	rest, err := io.ReadAll(w)
	require.NoError(t, err)
	require.Equal(t, got[1234:n], rest)
	return got[:n]
}

// TestFUSEThroughScheduler: a regular file on FUSE (bindfs), which Go's
// runtime registers with its poller, is a File like any other: with the
// default options, Direct and DirectRequired its reads, writes and syncs
// reach the scheduler (a scheduler of the test's own counts them), Direct
// gets O_DIRECT (FUSE takes it) and DirectRequired gets it or fails, no
// fallback is reported, and the bytes written, synced and read back are
// os.File's. The File's descriptors are off the poller and blocking:
// deadlines are refused, as for every regular file.
func TestFUSEThroughScheduler(t *testing.T) {
	dir := testenv.Mount(t, testenv.FUSE)
	data := randomBytes(1<<20+777, 51)

	osf, err := os.OpenFile(filepath.Join(dir, "os"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer osf.Close()
	require.NoError(t, osf.SetReadDeadline(noDeadline), "os.File polls a FUSE file: the case under test")
	want := writeSyncRead(t, osf, data)
	require.Equal(t, data, want)

	for _, mode := range []DirectMode{PageCache, Direct, DirectRequired} {
		t.Run(modeName(mode), func(t *testing.T) {
			var fb fallbacks
			s := newTestScheduler(t, &fb)
			path := filepath.Join(dir, "diskio-"+modeName(mode))
			f, err := OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, WithScheduler(s), WithDirect(mode))
			if mode == DirectRequired && err != nil {
				require.ErrorIs(t, err, dio.ErrUnsupported)
				t.Skipf("DirectRequired refused on this FUSE filesystem: %v", err)
			}
			require.NoError(t, err)
			defer f.Close()
			require.False(t, f.plain(), "a regular file on FUSE is a plain os.File wrapper")
			require.ErrorIs(t, f.SetReadDeadline(noDeadline), os.ErrNoDeadline, "the File's descriptor is still on the runtime's poller")
			require.Zero(t, statusFlags(t, f.bufferedFd)&unix.O_NONBLOCK, "the buffered descriptor is non-blocking")
			if mode == PageCache {
				require.False(t, f.Direct())
			} else {
				require.True(t, f.Direct(), "FUSE takes O_DIRECT; fallbacks: %v", fb.get())
				require.NotZero(t, statusFlags(t, f.dataFd)&unix.O_DIRECT, "Direct() without O_DIRECT on the descriptor")
			}
			got := writeSyncRead(t, f, data)
			require.Equal(t, want, got)
			back, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, want, back, "another descriptor's read")
			fi, err := f.Stat()
			require.NoError(t, err)
			require.Equal(t, int64(len(data)), fi.Size())

			reads, writes, syncs := requestsOf(s)
			t.Logf("%s: scheduler requests: %d reads, %d writes, %d syncs; %s", modeName(mode), reads, writes, syncs, f.nowait())
			require.NotZero(t, reads, "no read reached the scheduler")
			require.NotZero(t, writes, "no write reached the scheduler")
			require.NotZero(t, syncs, "no sync reached the scheduler")
			require.Empty(t, fb.get(), "fallbacks reported")
		})
	}
}

// TestFUSENewFile: NewFile of an *os.File the runtime polls (a FUSE file
// from os.OpenFile) makes a File whose requests reach the scheduler,
// starting at the *os.File's offset, with its locks (the same open file
// description), off the poller.
func TestFUSENewFile(t *testing.T) {
	dir := testenv.Mount(t, testenv.FUSE)
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("0123456789"), 0o644))
	osf, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, osf.SetReadDeadline(noDeadline), "os.File polls a FUSE file: the case under test")
	_, err = osf.Seek(4, io.SeekStart)
	require.NoError(t, err)
	rc, err := osf.SyscallConn()
	require.NoError(t, err)
	var lockErr error
	require.NoError(t, rc.Control(func(fd uintptr) { lockErr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) }))
	require.NoError(t, lockErr)

	var fb fallbacks
	s := newTestScheduler(t, &fb)
	f, err := NewFile(osf, WithScheduler(s))
	require.NoError(t, err)
	defer f.Close()
	require.False(t, f.plain())
	require.ErrorIs(t, f.SetDeadline(noDeadline), os.ErrNoDeadline)
	b := make([]byte, 3)
	_, err = io.ReadFull(f, b)
	require.NoError(t, err)
	require.Equal(t, "456", string(b))
	other, err := os.Open(path)
	require.NoError(t, err)
	defer other.Close()
	require.ErrorIs(t, unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB), unix.EWOULDBLOCK, "the File lost the *os.File's lock")
	reads, _, _ := requestsOf(s)
	require.NotZero(t, reads, "the read did not reach the scheduler")
	require.Empty(t, fb.get())
}

// TestStreamRegularFilePlain: a regular file without offsets that the
// runtime polls (tracefs's trace_pipe, which the test mounts) cannot go
// through the scheduler: OpenFile gives a plain File, as os.File's, and
// the scheduler reports it (a Fallback with Plain set).
func TestStreamRegularFilePlain(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (mounting tracefs)")
	}
	dir := t.TempDir()
	if err := unix.Mount("nodev", dir, "tracefs", 0, ""); err != nil {
		t.Skipf("mount tracefs: %v", err)
	}
	t.Cleanup(func() { require.NoError(t, unix.Unmount(dir, 0)) })
	path := filepath.Join(dir, "trace_pipe")
	for _, mode := range []DirectMode{PageCache, Direct} {
		var fb fallbacks
		s := newTestScheduler(t, &fb)
		f, err := OpenFile(path, os.O_RDONLY, 0, WithScheduler(s), WithDirect(mode))
		require.NoError(t, err)
		fi, err := f.Stat()
		require.NoError(t, err)
		require.True(t, fi.Mode().IsRegular(), "trace_pipe is no regular file here: the case is not tested")
		require.True(t, f.plain(), "a regular file without offsets went to the scheduler")
		_, err = f.ReadAt(make([]byte, 1), 0)
		require.ErrorIs(t, err, unix.ESPIPE, "os.File's ReadAt")
		require.NoError(t, f.Close())
		got := fb.get()
		require.Len(t, got, 1)
		require.True(t, got[0].Plain)
		require.Equal(t, path, got[0].Path)
		require.Contains(t, got[0].String(), "runs as a plain *os.File")
		require.Zero(t, s.Stats().Fallbacks, "Stats.Fallbacks counts files run buffered, not plain")
	}
}

// noDeadline is the zero time: SetReadDeadline(noDeadline) clears a
// deadline, and fails where the descriptor is not polled.
var noDeadline time.Time

// modeName names a DirectMode in test names.
func modeName(m DirectMode) string {
	return [...]string{"pagecache", "direct", "direct-required"}[m]
}
