//go:build linux

package sys

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// dataFile creates a file of n random bytes in dir (t.TempDir() when
// empty), written through os.File, and returns it open for reading and
// writing with its contents.
func dataFile(t *testing.T, dir string, n int) (*os.File, []byte) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	f, err := os.CreateTemp(dir, "sys-test-*")
	require.NoError(t, err)
	t.Cleanup(func() { f.Close(); os.Remove(f.Name()) })
	data := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	_, err = f.Write(data)
	require.NoError(t, err)
	return f, data
}

// isErrno says err is exactly the bare errno want: a syscall.Errno, not
// wrapped.
func isErrno(t *testing.T, err error, want syscall.Errno) {
	t.Helper()
	got, ok := err.(syscall.Errno)
	require.Truef(t, ok, "error %v (%T) is not a bare syscall.Errno", err, err)
	require.Equal(t, want, got)
}

// The readers agree with os.File's ReadAt, and a read across the end of
// the file is short, reported as its count with a nil error, as is the
// end itself (0, nil).
func TestReadsShortAtEOF(t *testing.T) {
	const size = 10000
	f, data := dataFile(t, "", size)
	fd := int(f.Fd())
	readers := map[string]func(t *testing.T, p []byte, off int64) (int, error){
		"Pread":   func(t *testing.T, p []byte, off int64) (int, error) { return Pread(fd, p, off) },
		"Preadv2": func(t *testing.T, p []byte, off int64) (int, error) { return Preadv2(fd, p, off, 0) },
		"RawPreadv2": func(t *testing.T, p []byte, off int64) (int, error) {
			n, err := RawPreadv2(fd, p, off, 0)
			if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EAGAIN) {
				t.Skipf("RawPreadv2 (RWF_NOWAIT) on %s: %v", f.Name(), err)
			}
			return n, err
		},
	}
	for name, read := range readers {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				off int64
				n   int
			}{{0, size}, {0, 100}, {4095, 8192}, {size - 10, 4096}, {size, 4096}, {size + 5000, 1}, {0, 0}} {
				p := make([]byte, c.n)
				want := max(0, min(c.n, size-int(c.off)))
				n, err := read(t, p, c.off)
				require.NoError(t, err, "off %d n %d", c.off, c.n)
				require.Equal(t, want, n, "off %d n %d", c.off, c.n)
				require.Equal(t, data[min(c.off, size):min(c.off, size)+int64(want)], p[:n])
				q := make([]byte, c.n)
				m, oerr := f.ReadAt(q, c.off)
				require.Equal(t, m, n, "os.File's count")
				if m < c.n {
					require.Equal(t, io.EOF, oerr)
				}
			}
		})
	}
}

// RawPreadv2 and Preadv2 (with RWF_NOWAIT) give the same bytes from the
// page cache on a filesystem that accepts RWF_NOWAIT (the test directory's:
// ext4 on CI's machine).
func TestRawPreadv2SameBytes(t *testing.T) {
	const size = 1 << 20
	f, data := dataFile(t, "", size)
	fd := int(f.Fd())
	if _, err := Preadv2(fd, make([]byte, 1), 0, unix.RWF_NOWAIT); err != nil {
		t.Skipf("preadv2(RWF_NOWAIT) on %s (the test directory's filesystem): %v", f.Name(), err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		off := r.Int64N(size)
		n := 1 + r.IntN(64<<10)
		a, b := make([]byte, n), make([]byte, n)
		na, erra := RawPreadv2(fd, a, off, 0)
		nb, errb := Preadv2(fd, b, off, unix.RWF_NOWAIT)
		require.NoError(t, erra)
		require.NoError(t, errb)
		require.Equal(t, na, nb)
		require.Equal(t, min(n, size-int(off)), na)
		require.True(t, bytes.Equal(a[:na], b[:nb]))
		require.True(t, bytes.Equal(data[off:off+int64(na)], a[:na]))
	}
}

// tmpfs refuses RWF_NOWAIT with EOPNOTSUPP (bare), raw or not; a read
// without the flag works there.
func TestNowaitRefusedOnTmpfs(t *testing.T) {
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skip("no tmpfs at /dev/shm")
	}
	f, data := dataFile(t, "/dev/shm", 8192)
	fd := int(f.Fd())
	p := make([]byte, 4096)
	_, err := Preadv2(fd, p, 0, unix.RWF_NOWAIT)
	if err == nil {
		t.Skip("this kernel's tmpfs accepts RWF_NOWAIT")
	}
	isErrno(t, err, unix.EOPNOTSUPP)
	n, err := RawPreadv2(fd, p, 0, 0)
	isErrno(t, err, unix.EOPNOTSUPP)
	require.Zero(t, n)
	n, err = Preadv2(fd, p, 4096, 0)
	require.NoError(t, err)
	require.Equal(t, data[4096:], p[:n])
}

// Errors come back bare, with a count of 0.
func TestErrorsBare(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(name, []byte("hello"), 0o600))
	fd, err := Open(name, unix.O_WRONLY, 0)
	require.NoError(t, err)
	defer Close(fd)
	p := make([]byte, 5)
	for _, read := range []func() (int, error){
		func() (int, error) { return Pread(fd, p, 0) },
		func() (int, error) { return Preadv2(fd, p, 0, 0) },
		func() (int, error) { return Read(fd, p) },
	} {
		n, err := read()
		isErrno(t, err, unix.EBADF)
		require.Zero(t, n)
	}
	_, err = Open(filepath.Join(dir, "missing"), unix.O_RDONLY, 0)
	isErrno(t, err, unix.ENOENT)
	var st unix.Stat_t
	isErrno(t, Fstat(-1, &st), unix.EBADF)
	isErrno(t, Ftruncate(fd, -1), unix.EINVAL)
	_, err = Seek(fd, -1, io.SeekStart)
	isErrno(t, err, unix.EINVAL)
	isErrno(t, Unlinkat(unix.AT_FDCWD, filepath.Join(dir, "missing"), 0), unix.ENOENT)
	// Close is not retried, and a second close of the number says EBADF.
	rfd, err := Open(name, unix.O_RDONLY, 0)
	require.NoError(t, err)
	require.NoError(t, Close(rfd))
	isErrno(t, Close(rfd), unix.EBADF)
}

// Open always sets O_CLOEXEC; Fcntl reads and sets the status flags.
func TestOpenFcntl(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	fd, err := Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o640)
	require.NoError(t, err)
	defer Close(fd)
	fdfl, err := Fcntl(fd, unix.F_GETFD, 0)
	require.NoError(t, err)
	require.NotZero(t, fdfl&unix.FD_CLOEXEC)
	var st unix.Stat_t
	require.NoError(t, Fstat(fd, &st))
	require.Zero(t, st.Mode&0o137, "perm 0o640 (less the umask)")
	fl, err := Fcntl(fd, unix.F_GETFL, 0)
	require.NoError(t, err)
	require.Zero(t, fl&unix.O_APPEND)
	_, err = Fcntl(fd, unix.F_SETFL, fl|unix.O_APPEND)
	require.NoError(t, err)
	fl, err = Fcntl(fd, unix.F_GETFL, 0)
	require.NoError(t, err)
	require.NotZero(t, fl&unix.O_APPEND)
	nfd, err := Fcntl(fd, unix.F_DUPFD_CLOEXEC, 0)
	require.NoError(t, err)
	require.NoError(t, Close(nfd))
}

// Writes: counts, offsets, RWF_APPEND at the descriptor's offset, and the
// size and blocks Fstat and Statx give against os.File's Stat.
func TestWritesAndSizes(t *testing.T) {
	f, data := dataFile(t, "", 5000)
	fd := int(f.Fd())
	stat := func() (unix.Stat_t, unix.Statx_t) {
		var st unix.Stat_t
		require.NoError(t, Fstat(fd, &st))
		var stx unix.Statx_t
		require.NoError(t, Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_SIZE|unix.STATX_BLOCKS, &stx))
		fi, err := f.Stat()
		require.NoError(t, err)
		require.Equal(t, fi.Size(), st.Size)
		require.Equal(t, uint64(st.Size), stx.Size)
		require.Equal(t, fi.Sys().(*syscall.Stat_t).Blocks, st.Blocks)
		return st, stx
	}
	st, _ := stat()
	require.Equal(t, int64(5000), st.Size)

	n, err := Pwrite(fd, []byte("abc"), 10)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	n, err = Pwritev2(fd, []byte("xyz"), 7000, 0)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	st, _ = stat()
	require.Equal(t, int64(7003), st.Size)

	// RWF_APPEND at offset -1: at the end, whatever the offset says.
	pos, err := Seek(fd, 0, io.SeekStart)
	require.NoError(t, err)
	require.Zero(t, pos)
	n, err = Pwritev2(fd, []byte("tail"), -1, unix.RWF_APPEND)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	pos, err = Seek(fd, 0, io.SeekCurrent)
	require.NoError(t, err)
	require.Equal(t, int64(7007), pos)
	pos, err = Seek(fd, 0, io.SeekEnd)
	require.NoError(t, err)
	require.Equal(t, int64(7007), pos)

	got := make([]byte, 7007)
	n, err = Pread(fd, got, 0)
	require.NoError(t, err)
	require.Equal(t, 7007, n)
	want := append([]byte(nil), data...)
	copy(want[10:], "abc")
	want = append(want, make([]byte, 2000)...)
	want = append(want, "xyztail"...)
	require.Equal(t, want, got)

	require.NoError(t, Ftruncate(fd, 1234))
	st, _ = stat()
	require.Equal(t, int64(1234), st.Size)

	// FALLOC_FL_KEEP_SIZE allocates without changing the size; mode 0
	// extends it.
	if err := Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, 1<<20); err != nil {
		t.Skipf("fallocate on %s: %v", f.Name(), err)
	}
	st, _ = stat()
	require.Equal(t, int64(1234), st.Size)
	require.GreaterOrEqual(t, st.Blocks*512, int64(1<<20))
	require.NoError(t, Fallocate(fd, 0, 0, 3<<20))
	st, _ = stat()
	require.Equal(t, int64(3<<20), st.Size)

	require.NoError(t, Fsync(fd))
	require.NoError(t, Fdatasync(fd))
	require.NoError(t, Fadvise(fd, 0, 0, unix.FADV_WILLNEED))
	var sfs unix.Statfs_t
	require.NoError(t, Fstatfs(fd, &sfs))
	var want2 unix.Statfs_t
	require.NoError(t, unix.Statfs(f.Name(), &want2))
	require.Equal(t, want2.Type, sfs.Type)
}

// CopyFileRange copies and advances both offsets; its count may be short
// only at the end of the source.
func TestCopyFileRange(t *testing.T) {
	src, data := dataFile(t, "", 100000)
	dst, _ := dataFile(t, "", 0)
	roff, woff := int64(1000), int64(50)
	n, err := CopyFileRange(int(src.Fd()), &roff, int(dst.Fd()), &woff, 200000, 0)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("copy_file_range: %v", err)
	}
	require.NoError(t, err)
	require.Equal(t, 99000, n)
	require.Equal(t, int64(100000), roff)
	require.Equal(t, int64(99050), woff)
	got := make([]byte, 99000)
	m, err := Pread(int(dst.Fd()), got, 50)
	require.NoError(t, err)
	require.Equal(t, 99000, m)
	require.Equal(t, data[1000:], got)
	n, err = CopyFileRange(int(src.Fd()), &roff, int(dst.Fd()), &woff, 10, 0)
	require.NoError(t, err)
	require.Zero(t, n, "the end of the source")
}

// Cachestat counts the pages just written as cached.
func TestCachestat(t *testing.T) {
	f, _ := dataFile(t, "", 64<<10)
	r := unix.CachestatRange{Off: 0, Len: 64 << 10}
	var cs unix.Cachestat_t
	err := Cachestat(int(f.Fd()), &r, &cs)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		t.Skipf("cachestat: %v (Linux 6.5 on)", err)
	}
	require.NoError(t, err)
	require.Equal(t, uint64(64<<10)/uint64(os.Getpagesize()), cs.Cache)
}

// An eventfd's counter, written raw and read back.
func TestEventfdRawWrite(t *testing.T) {
	efd, err := Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	require.NoError(t, err)
	defer Close(efd)
	var buf [8]byte
	_, err = Read(efd, buf[:])
	isErrno(t, err, unix.EAGAIN)
	one := [8]byte{1}
	for range 3 {
		n, err := RawWrite(efd, one[:])
		require.NoError(t, err)
		require.Equal(t, 8, n)
	}
	n, err := Read(efd, buf[:])
	require.NoError(t, err)
	require.Equal(t, 8, n)
	require.Equal(t, [8]byte{3}, buf)
}

// A page-cache hit allocates nothing, raw or not.
func TestReadsAllocateNothing(t *testing.T) {
	f, _ := dataFile(t, "", 8192)
	fd := int(f.Fd())
	if _, err := Preadv2(fd, make([]byte, 1), 0, unix.RWF_NOWAIT); err != nil {
		t.Skipf("preadv2(RWF_NOWAIT) on %s: %v", f.Name(), err)
	}
	p := make([]byte, 4096)
	for name, read := range map[string]func() (int, error){
		"Pread":      func() (int, error) { return Pread(fd, p, 100) },
		"Preadv2":    func() (int, error) { return Preadv2(fd, p, 100, unix.RWF_NOWAIT) },
		"RawPreadv2": func() (int, error) { return RawPreadv2(fd, p, 100, 0) },
	} {
		allocs := testing.AllocsPerRun(100, func() {
			if n, err := read(); n != len(p) || err != nil {
				t.Fatalf("%s: %d, %v", name, n, err)
			}
		})
		require.Zero(t, allocs, name)
	}
}

// BenchmarkPreadv2 compares the page-cache read of 4 KiB through each
// reader.
func BenchmarkPreadv2(b *testing.B) {
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "f"))
	require.NoError(b, err)
	defer f.Close()
	_, err = f.Write(make([]byte, 1<<20))
	require.NoError(b, err)
	fd := int(f.Fd())
	p := make([]byte, 4096)
	for _, c := range []struct {
		name string
		read func(off int64) (int, error)
	}{
		{"Pread", func(off int64) (int, error) { return Pread(fd, p, off) }},
		{"Preadv2", func(off int64) (int, error) { return Preadv2(fd, p, off, unix.RWF_NOWAIT) }},
		{"RawPreadv2", func(off int64) (int, error) { return RawPreadv2(fd, p, off, 0) }},
		{"unix.Preadv2", func(off int64) (int, error) {
			return unix.Preadv2(fd, [][]byte{p}, off, unix.RWF_NOWAIT)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			var off int64
			for b.Loop() {
				if _, err := c.read(off); err != nil {
					b.Skipf("%s: %v", c.name, err)
				}
				off = (off + 4096) & (1<<20 - 1)
			}
		})
	}
}
