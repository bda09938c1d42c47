//go:build linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
)

// TestBadInputMatchesOSFile: nil and empty buffers, huge offsets and
// lengths, writes through a read-only File: each call gives os.File's
// result (count and errno, as a *fs.PathError when it fails) and the
// file's bytes are untouched.
func TestBadInputMatchesOSFile(t *testing.T) {
	dir := t.TempDir()
	content := randomBytes(5000, 5)
	pd, po := filepath.Join(dir, "d"), filepath.Join(dir, "o")
	for _, p := range []string{pd, po} {
		require.NoError(t, os.WriteFile(p, content, 0o644))
	}
	for _, m := range openModes {
		t.Run(m.name, func(t *testing.T) {
			f := openForTest(t, pd, os.O_RDWR, m.mode)
			defer f.Close()
			of, err := os.OpenFile(po, os.O_RDWR, 0)
			require.NoError(t, err)
			defer of.Close()
			one := []byte{1}
			type io2 func() (int, error)
			cases := []struct {
				name       string
				diskio, os io2
			}{
				{"ReadAt nil", func() (int, error) { return f.ReadAt(nil, 0) }, func() (int, error) { return of.ReadAt(nil, 0) }},
				{"ReadAt empty past EOF", func() (int, error) { return f.ReadAt([]byte{}, 1<<40) }, func() (int, error) { return of.ReadAt([]byte{}, 1<<40) }},
				{"WriteAt nil", func() (int, error) { return f.WriteAt(nil, 100) }, func() (int, error) { return of.WriteAt(nil, 100) }},
				{"Read nil", func() (int, error) { return f.Read(nil) }, func() (int, error) { return of.Read(nil) }},
				{"Write nil", func() (int, error) { return f.Write(nil) }, func() (int, error) { return of.Write(nil) }},
				{"ReadAt negative", func() (int, error) { return f.ReadAt(one, -1) }, func() (int, error) { return of.ReadAt(one, -1) }},
				{"WriteAt negative", func() (int, error) { return f.WriteAt(one, -1) }, func() (int, error) { return of.WriteAt(one, -1) }},
				{"ReadAt MaxInt64", func() (int, error) { return f.ReadAt(one, math.MaxInt64) }, func() (int, error) { return of.ReadAt(one, math.MaxInt64) }},
				{"WriteAt MaxInt64", func() (int, error) { return f.WriteAt(one, math.MaxInt64) }, func() (int, error) { return of.WriteAt(one, math.MaxInt64) }},
				{"WriteAt past max file size", func() (int, error) { return f.WriteAt(one, 1<<62) }, func() (int, error) { return of.WriteAt(one, 1<<62) }},
				{"ReadAt far past EOF", func() (int, error) { return f.ReadAt(one, 1<<62) }, func() (int, error) { return of.ReadAt(one, 1<<62) }},
			}
			for _, c := range cases {
				var n int
				var err error
				noPanic(t, c.name, func() { n, err = c.diskio() })
				on, oerr := c.os()
				require.Equal(t, on, n, c.name)
				require.Empty(t, diffErr(err, oerr, pd, po), c.name)
				if err != nil && err != io.EOF {
					var pe *fs.PathError
					require.ErrorAs(t, err, &pe, c.name)
					require.Equal(t, pd, pe.Path, c.name)
				}
			}
			require.NoError(t, f.Sync())
			got, err := os.ReadFile(pd)
			require.NoError(t, err)
			require.Equal(t, content, got)
		})
	}
}

// TestDirectoryAsFile: a directory opens for reading (as with os.File),
// reads fail with EISDIR as *fs.PathError, Sync works (it is how a
// directory is made durable), and opening it for writing fails.
func TestDirectoryAsFile(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFile(dir, os.O_RDONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.ReadAt(make([]byte, 10), 0)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, syscall.EISDIR)
	_, err = f.Read(make([]byte, 10))
	require.ErrorIs(t, err, syscall.EISDIR)
	_, err = f.WriteAt([]byte("x"), 0)
	require.ErrorIs(t, err, syscall.EBADF)
	require.NoError(t, f.Sync())
	_, err = OpenFile(dir, os.O_RDWR, 0)
	require.ErrorIs(t, err, syscall.EISDIR)
	_, err = OpenFile(filepath.Join(dir, "missing", "x"), os.O_RDWR|os.O_CREATE, 0o644)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestTmpfs: on tmpfs (O_DIRECT only since Linux 6.6; page cache only,
// nothing to flush) every durability call works or fails clearly, and
// the bytes are right.
func TestTmpfs(t *testing.T) {
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skip("no tmpfs at /dev/shm")
	}
	dir, err := os.MkdirTemp("/dev/shm", "diskio-test")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "f")
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644, WithDirect(DirectRequired))
	if err != nil {
		// Kernels before 6.6: a clear error naming the filesystem.
		require.ErrorContains(t, err, "tmpfs")
		f, err = OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		require.False(t, f.Direct())
	}
	defer f.Close()
	want := randomBytes(10000, 8)
	_, err = f.WriteAtDSync(want[:3000], 0)
	require.NoError(t, err)
	_, err = f.WriteAt(want[3000:], 3000)
	require.NoError(t, err)
	require.NoError(t, f.PreallocateKeepSize(0, 1<<20))
	require.NoError(t, f.Datasync())
	require.NoError(t, f.Sync())
	require.NoError(t, SyncDir(dir))
	err = f.Preallocate(0, 64<<10)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(10000))
	require.NoError(t, f.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.False(t, errors.Is(err, os.ErrClosed))
}

// TestListedDirectoryMatchesOSFile: a directory read after it was listed
// (its offset is then the filesystem's end-of-directory cookie, which
// read(2) refuses with EINVAL on ext4) gives os.File's results, in every
// mode: the counts, and the errors as *fs.PathError with os.File's bare
// errno, never an O_DIRECT alignment report for a file that is not
// O_DIRECT.
func TestListedDirectoryMatchesOSFile(t *testing.T) {
	root := t.TempDir()
	dd, od := filepath.Join(root, "d"), filepath.Join(root, "o")
	for _, d := range []string{dd, od} {
		require.NoError(t, os.Mkdir(d, 0o755))
		for _, name := range []string{"a", "b", "c"} {
			require.NoError(t, os.WriteFile(filepath.Join(d, name), []byte(name), 0o644))
		}
	}
	for _, m := range openModes {
		t.Run(m.name, func(t *testing.T) {
			f, err := OpenFile(dd, os.O_RDONLY, 0, WithDirect(m.mode))
			require.NoError(t, err)
			defer f.Close()
			of, err := os.Open(od)
			require.NoError(t, err)
			defer of.Close()
			buf := make([]byte, 10)
			steps := []struct {
				name       string
				diskio, os func() (int, error)
			}{
				{"ReadDir", func() (int, error) { e, err := f.ReadDir(-1); return len(e), err }, func() (int, error) { e, err := of.ReadDir(-1); return len(e), err }},
				{"Read after ReadDir", func() (int, error) { return f.Read(buf) }, func() (int, error) { return of.Read(buf) }},
				{"ReadAt after ReadDir", func() (int, error) { return f.ReadAt(buf, 0) }, func() (int, error) { return of.ReadAt(buf, 0) }},
				{"ReadDir at the end", func() (int, error) { e, err := f.ReadDir(-1); return len(e), err }, func() (int, error) { e, err := of.ReadDir(-1); return len(e), err }},
				{"Seek to 0", func() (int, error) { n, err := f.Seek(0, io.SeekStart); return int(n), err }, func() (int, error) { n, err := of.Seek(0, io.SeekStart); return int(n), err }},
				{"Read after Seek", func() (int, error) { return f.Read(buf) }, func() (int, error) { return of.Read(buf) }},
				{"Readdirnames after Seek", func() (int, error) { e, err := f.Readdirnames(-1); return len(e), err }, func() (int, error) { e, err := of.Readdirnames(-1); return len(e), err }},
				{"Read after Readdirnames", func() (int, error) { return f.Read(buf) }, func() (int, error) { return of.Read(buf) }},
			}
			for _, s := range steps {
				n, err := s.diskio()
				on, oerr := s.os()
				require.Equal(t, on, n, s.name)
				require.Empty(t, diffErr(err, oerr, dd, od), s.name)
				var einval *dio.EINVALError
				require.False(t, errors.As(err, &einval), "%s: %v", s.name, err)
			}
		})
	}
}
