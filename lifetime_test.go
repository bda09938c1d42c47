//go:build linux

package diskio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rssBytes is the process's resident set (/proc/self/statm).
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	require.NoError(t, err)
	pages, err := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
	require.NoError(t, err)
	return pages * int64(os.Getpagesize())
}

// TestDroppedBuffersReturned: 10,000 Buffers dropped without Release are
// found by the garbage collector, counted, and their off-heap memory given
// back: reading as many again reuses it, with no new memory.
func TestDroppedBuffersReturned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, randomBytes(1<<20, 1), 0o644))
	f, err := OpenFile(path, os.O_RDONLY, 0, WithDirect(Direct))
	require.NoError(t, err)
	defer f.Close()
	require.True(t, f.Direct())
	const n = 10000
	runtime.GC()
	pool := poolFor(f.s)
	before, rss0, allocs0 := DroppedBuffers(), rssBytes(t), pool.allocs.Load()
	// Hold them all first, so that none is recycled before the others
	// are read: the memory really grows by n blocks.
	bufs := make([]*Buffer, n)
	for i := range bufs {
		b, err := f.ReadBuffer(int64(i%256)*4096, 4096)
		require.NoError(t, err)
		require.Len(t, b.Bytes(), 4096)
		bufs[i] = b
	}
	rss1 := rssBytes(t)
	bufs = nil // dropped, never released
	deadline := time.Now().Add(20 * time.Second)
	for DroppedBuffers()-before < n && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	rss2 := rssBytes(t)
	t.Logf("RSS %d MB, holding %d Buffers %d MB, dropped %d MB; DroppedBuffers %d",
		rss0>>20, n, rss1>>20, rss2>>20, DroppedBuffers()-before)
	require.Equal(t, int64(n), DroppedBuffers()-before)
	// Most of the blocks are new (the pool may hold a few from earlier
	// tests), so the test can tell reuse from new memory below.
	require.Greater(t, pool.allocs.Load()-allocs0, uint64(n/2), "the reads did not take the memory the test expects")
	// The memory went back to the scheduler's read pool (64 MiB of it is
	// kept for reuse, not unmapped): reading and holding n Buffers again
	// takes no new memory and does not raise the RSS. Without the cleanup
	// every one of them would be a new block.
	allocs := pool.allocs.Load()
	for i := range n {
		b, err := f.ReadBuffer(int64(i%256)*4096, 4096)
		require.NoError(t, err)
		bufs = append(bufs, b)
	}
	rss3 := rssBytes(t)
	t.Logf("held again: RSS %d MB, new blocks %d", rss3>>20, pool.allocs.Load()-allocs)
	require.Zero(t, pool.allocs.Load()-allocs, "dropped Buffers' memory was not returned for reuse")
	require.Less(t, rss3-rss2, int64(10<<20), "holding the Buffers again grew the RSS")
	for _, b := range bufs {
		b.Release()
	}
	bufs = nil
	// Released Buffers are not counted.
	b, err := f.ReadBuffer(0, 10)
	require.NoError(t, err)
	b.Release()
	b = nil
	runtime.GC()
	runtime.GC()
	require.Equal(t, int64(n), DroppedBuffers()-before)
}

// TestCloseWithOpenStreamReader: Close of a File whose StreamReader is
// open, mid-file with reads in flight, or dropped, returns; the stream's
// reads then fail with os.ErrClosed.
func TestCloseWithOpenStreamReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, randomBytes(8<<20, 2), 0o644))
	for _, how := range []string{"unread", "mid-file", "dropped", "at-eof", "reader-closed"} {
		t.Run(how, func(t *testing.T) {
			f, err := Open(path)
			require.NoError(t, err)
			r, err := f.NewStreamReader(0, StreamOptions{BufferSize: 64 << 10, ReadAhead: 4})
			require.NoError(t, err)
			switch how {
			case "mid-file":
				_, err := io.CopyN(io.Discard, r, 3<<20+17)
				require.NoError(t, err)
			case "dropped":
				r = nil
				runtime.GC()
			case "at-eof":
				_, err := io.Copy(io.Discard, r)
				require.NoError(t, err)
			case "reader-closed":
				require.NoError(t, r.Close())
			}
			closed := make(chan error, 1)
			go func() { closed <- f.Close() }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("File.Close did not return with a StreamReader open")
			}
			if r != nil {
				_, err := r.Read(make([]byte, 10))
				require.True(t, errors.Is(err, os.ErrClosed), "read after Close: %v", err)
				require.NoError(t, r.Close())
			}
		})
	}
	// A stream made of a closed File fails to read, and closes.
	f, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = f.NewStreamReader(0, StreamOptions{})
	require.ErrorIs(t, err, os.ErrClosed)
}

// TestPlainExtras: the methods os.File lacks, on files handed to the
// plain path, and on a nil File.
func TestPlainExtras(t *testing.T) {
	z, err := Open("/dev/zero")
	require.NoError(t, err)
	defer z.Close()
	require.False(t, z.Direct())
	require.Equal(t, 1, z.Alignment())
	b, err := z.ReadBuffer(1<<30, 100)
	require.NoError(t, err)
	require.Equal(t, make([]byte, 100), b.Bytes())
	b.Release()
	bufs, err := z.ReadMany([]Range{{0, 10}, {5, 3}}, ReadManyOptions{})
	require.NoError(t, err)
	require.Len(t, bufs[1].Bytes(), 3)
	_, err = z.NewStreamReader(0, StreamOptions{})
	require.ErrorContains(t, err, "not a regular file")

	d, err := Open(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, d.Datasync())
	_, err = d.ReadBuffer(0, 10)
	require.ErrorIs(t, err, syscall.EISDIR)
	osf, err := d.OSFile()
	require.NoError(t, err)
	require.NoError(t, osf.Close())
	require.NoError(t, d.Close())
	require.Equal(t, ^uintptr(0), d.Fd())

	var nf *File
	for _, err := range []error{
		nf.Datasync(), nf.Preallocate(0, 1), nf.PreallocateKeepSize(0, 1),
		func() error { _, err := nf.ReadBuffer(0, 1); return err }(),
		func() error { _, err := nf.ReadMany(nil, ReadManyOptions{}); return err }(),
		func() error { _, err := nf.NewStreamReader(0, StreamOptions{}); return err }(),
		func() error { _, err := nf.NewStreamWriter(0, StreamOptions{}); return err }(),
		func() error { _, err := nf.WriteAtDSync(nil, 0); return err }(),
		func() error { _, err := nf.OSFile(); return err }(),
	} {
		require.ErrorIs(t, err, os.ErrInvalid)
	}
	require.False(t, nf.Direct())
	require.Equal(t, 1, nf.Alignment())
}

// TestOSFileIsIndependent: the *os.File from OSFile does unaligned I/O,
// and neither its Close nor its finalizer touches the File's descriptor.
func TestOSFileIsIndependent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, WithDirect(Direct))
	require.NoError(t, err)
	defer f.Close()
	require.True(t, f.Direct())
	_, err = f.WriteString("hello, world")
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	for range 3 {
		osf, err := f.OSFile()
		require.NoError(t, err)
		require.NotEqual(t, f.Fd(), osf.Fd())
		got := make([]byte, 5)
		_, err = osf.ReadAt(got, 7) // unaligned: EINVAL on an O_DIRECT descriptor
		require.NoError(t, err)
		require.Equal(t, "world", string(got))
		osf = nil // dropped: its finalizer closes its own descriptor only
		runtime.GC()
		runtime.GC()
	}
	got := make([]byte, 5)
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
}

// TestCopyOntoItself: io.Copy of a File into itself, directly or through
// wrappers that use its cursor, returns as os.File's does.
func TestCopyOntoItself(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			require.NoError(t, os.WriteFile(path, randomBytes(10000, 3), 0o644))
			f, err := im.open(path, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			done := make(chan struct{})
			go func() {
				defer close(done)
				f.Seek(5000, io.SeekStart)
				io.Copy(f, f)
				f.Seek(0, io.SeekStart)
				io.Copy(struct{ io.Writer }{f}, f)
				f.Seek(0, io.SeekStart)
				io.Copy(f, struct{ io.Reader }{f})
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("io.Copy of a file into itself did not return")
			}
		})
	}
}
