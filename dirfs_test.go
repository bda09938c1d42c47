package diskio

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// fileMethodSet is the method set File has on every system: file_linux.go and
// file_other.go must both satisfy it.
type fileMethodSet interface {
	Name() string
	Read(p []byte) (int, error)
	ReadAt(p []byte, off int64) (int, error)
	Write(p []byte) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	WriteString(s string) (int, error)
	Seek(offset int64, whence int) (int64, error)
	Stat() (fs.FileInfo, error)
	Sync() error
	Datasync() error
	Truncate(size int64) error
	Preallocate(off, n int64) error
	Close() error
	Fd() uintptr
	Direct() bool
}

var (
	_ fileMethodSet = (*File)(nil)
	_ fs.File       = (*File)(nil)

	_ func(string) (*File, error)                              = Open
	_ func(string) (*File, error)                              = Create
	_ func(string, int, fs.FileMode, ...Option) (*File, error) = OpenFile
	_ func(string) fs.FS                                       = DirFS
)

// dirFSTree is the files of the tree the DirFS tests make: sizes below,
// at and around the usual 512 and 4096 alignments, and empty. (fstest.TestFS
// reads every file a few bytes at a time, each read a disk access with
// O_DIRECT: TestDirFSLargeFile reads a file larger than a bounce buffer.)
var dirFSTree = map[string]int{
	"hello.txt":            13,
	"empty":                0,
	"one":                  1,
	"a/511":                511,
	"a/512":                512,
	"a/4096":               4096,
	"a/5000":               5000,
	"a/b/12345":            12345,
	"a/b/c/empty":          0,
	"a/b/c/8193":           8193,
	"name with spaces.dat": 777,
	"a/b/c/d/e/zero":       0,
}

// makeDirFSTree writes dirFSTree (and an empty directory, emptydir) under a new
// temporary directory and returns it with each file's contents.
func makeDirFSTree(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewChaCha8([32]byte{1, 2, 3}))
	want := make(map[string][]byte)
	for name, size := range dirFSTree {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		if name == "hello.txt" {
			data = []byte("Hello, world!")
		}
		full := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, data, 0o644))
		want[name] = data
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "emptydir"), 0o755))
	return dir, want
}

func dirFSTreeNames(want map[string][]byte) []string {
	names := []string{"emptydir"}
	for name := range want {
		names = append(names, name)
	}
	return names
}

func TestDirFS(t *testing.T) {
	dir, want := makeDirFSTree(t)
	names := dirFSTreeNames(want)
	if runtime.GOOS != "windows" {
		// A relative and an absolute link to files of the tree (the
		// absolute one points into the tree, not out of it).
		require.NoError(t, os.Symlink("a/5000", filepath.Join(dir, "link")))
		require.NoError(t, os.Symlink(filepath.Join(dir, "a", "b", "12345"), filepath.Join(dir, "a", "abslink")))
		want["link"], want["a/abslink"] = want["a/5000"], want["a/b/12345"]
		names = append(names, "link", "a/abslink")
	}
	fsys := DirFS(dir)
	require.NoError(t, fstest.TestFS(fsys, names...))

	for name, data := range want {
		got, err := fs.ReadFile(fsys, name)
		require.NoError(t, err, name)
		require.True(t, bytes.Equal(data, got), "%s: ReadFile: contents differ", name)

		f, err := fsys.Open(name)
		require.NoError(t, err, name)
		df, ok := f.(*dirFile)
		require.True(t, ok, "%s: Open returned %T, not a diskio file", name, f)
		fi, err := df.Stat()
		require.NoError(t, err)
		require.Equal(t, int64(len(data)), fi.Size(), name)
		require.Equal(t, filepath.Base(filepath.FromSlash(name)), fi.Name())
		require.True(t, fi.Mode().IsRegular(), name)
		got, err = io.ReadAll(f)
		require.NoError(t, err, name)
		require.True(t, bytes.Equal(data, got), "%s: Read: contents differ", name)
		require.NoError(t, f.Close())
		require.Error(t, f.Close(), "%s: second Close", name)
	}
}

// TestDirFSTrailingSeparator: a root given with a trailing separator is
// the same file system.
func TestDirFSTrailingSeparator(t *testing.T) {
	dir, want := makeDirFSTree(t)
	fsys := DirFS(dir + string(os.PathSeparator))
	for name, data := range want {
		got, err := fs.ReadFile(fsys, name)
		require.NoError(t, err, name)
		require.Equal(t, data, got, name)
		fi, err := fs.Stat(fsys, name)
		require.NoError(t, err, name)
		require.Equal(t, int64(len(data)), fi.Size(), name)
	}
	entries, err := fs.ReadDir(fsys, ".")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
}

// TestDirFSLargeFile reads a file larger than one bounce buffer (1 MiB)
// and not a multiple of any alignment, whole and in pieces.
func TestDirFSLargeFile(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3<<20+4097)
	rng := rand.New(rand.NewChaCha8([32]byte{4, 5, 6}))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "big"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big", "f"), data, 0o644))
	fsys := DirFS(dir)

	got, err := fs.ReadFile(fsys, "big/f")
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "ReadFile: contents differ")

	f, err := fsys.Open("big/f")
	require.NoError(t, err)
	defer f.Close()
	got, err = io.ReadAll(f)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "ReadAll: contents differ")

	ra := f.(io.ReaderAt)
	buf := make([]byte, 1<<20+777)
	for _, off := range []int64{0, 1, 4095, 1 << 20, int64(len(data)) - int64(len(buf)) - 1} {
		n, err := ra.ReadAt(buf, off)
		require.NoError(t, err, off)
		require.Equal(t, len(buf), n)
		require.True(t, bytes.Equal(data[off:off+int64(n)], buf), "ReadAt(%d)", off)
	}
	n, err := ra.ReadAt(buf, int64(len(data))-100)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, 100, n)
	require.True(t, bytes.Equal(data[len(data)-100:], buf[:n]))

	s := f.(io.Seeker)
	pos, err := s.Seek(-5000, io.SeekEnd)
	require.NoError(t, err)
	require.Equal(t, int64(len(data))-5000, pos)
	got, err = io.ReadAll(f)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data[pos:], got), "Seek+ReadAll: contents differ")
}

func TestDirFSDirectories(t *testing.T) {
	dir, _ := makeDirFSTree(t)
	fsys := DirFS(dir)
	for _, name := range []string{".", "a", "a/b", "a/b/c", "emptydir"} {
		f, err := fsys.Open(name)
		require.NoError(t, err, name)
		rd, ok := f.(fs.ReadDirFile)
		require.True(t, ok, "%s: %T is not an fs.ReadDirFile", name, f)
		entries, err := rd.ReadDir(-1)
		require.NoError(t, err, name)
		viaFS, err := fs.ReadDir(fsys, name)
		require.NoError(t, err, name)
		require.Len(t, entries, len(viaFS), name)
		fi, err := f.Stat()
		require.NoError(t, err)
		require.True(t, fi.IsDir(), name)
		require.NoError(t, f.Close())
	}

	// Reading a directory as a file fails; so does ReadDir of a file.
	_, err := fs.ReadFile(fsys, "a")
	require.Error(t, err)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "a", pe.Path)
	_, err = fs.ReadDir(fsys, "hello.txt")
	require.Error(t, err)
}

func TestDirFSInvalidPaths(t *testing.T) {
	dir, _ := makeDirFSTree(t)
	// A file next to the root, which "../" would reach if it were allowed.
	outside := filepath.Join(filepath.Dir(dir), "outside-"+filepath.Base(dir))
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o644))
	t.Cleanup(func() { os.Remove(outside) })

	fsys := DirFS(dir)
	ops := map[string]func(string) error{
		"open": func(name string) error {
			f, err := fsys.Open(name)
			if err == nil {
				f.Close()
			}
			return err
		},
		"readfile": func(name string) error { _, err := fsys.(fs.ReadFileFS).ReadFile(name); return err },
		"stat":     func(name string) error { _, err := fsys.(fs.StatFS).Stat(name); return err },
		"readdir":  func(name string) error { _, err := fsys.(fs.ReadDirFS).ReadDir(name); return err },
		"lstat":    func(name string) error { _, err := fsys.(fs.ReadLinkFS).Lstat(name); return err },
		"readlink": func(name string) error { _, err := fsys.(fs.ReadLinkFS).ReadLink(name); return err },
	}
	bad := []string{
		"../x",
		"../" + filepath.Base(outside),
		"..",
		"/abs",
		"/" + filepath.ToSlash(outside),
		"a/../hello.txt",
		"./hello.txt",
		"a/",
		"a//5000",
		"",
		"a\x00b",
	}
	if runtime.GOOS == "windows" {
		bad = append(bad, `a\5000`, "c:/x", "NUL", "a/b/c:d")
	}
	for op, fn := range ops {
		for _, name := range bad {
			err := fn(name)
			require.ErrorIs(t, err, fs.ErrInvalid, "%s(%q)", op, name)
			var pe *fs.PathError
			require.ErrorAs(t, err, &pe, "%s(%q)", op, name)
			require.Equal(t, op, pe.Op, "%s(%q)", op, name)
			require.Equal(t, name, pe.Path, "%s(%q)", op, name)
		}
	}
}

// TestDirFSErrorNames: errors name the file as given to the file system,
// not its path on the operating system.
func TestDirFSErrorNames(t *testing.T) {
	dir, _ := makeDirFSTree(t)
	fsys := DirFS(dir)
	for _, name := range []string{"missing", "a/missing", "a/b/c/missing/deeper", "hello.txt/x"} {
		for _, fn := range []func() error{
			func() error { _, err := fsys.Open(name); return err },
			func() error { _, err := fs.ReadFile(fsys, name); return err },
			func() error { _, err := fs.Stat(fsys, name); return err },
			func() error { _, err := fs.ReadDir(fsys, name); return err },
			func() error { _, err := fs.Lstat(fsys, name); return err },
			func() error { _, err := fs.ReadLink(fsys, name); return err },
		} {
			err := fn()
			require.Error(t, err, name)
			require.NotErrorIs(t, err, fs.ErrInvalid, name)
			var pe *fs.PathError
			require.ErrorAs(t, err, &pe, name)
			require.Equal(t, name, pe.Path)
		}
	}
	_, err := fsys.Open("missing")
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestDirFSEmptyRoot(t *testing.T) {
	fsys := DirFS("")
	_, err := fsys.Open("x")
	require.Error(t, err)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "x", pe.Path)
	_, err = fs.ReadFile(fsys, ".")
	require.Error(t, err)
}

// TestDirFSConcurrentReadAt reads one file of the file system from many
// goroutines at unaligned offsets.
func TestDirFSConcurrentReadAt(t *testing.T) {
	dir, want := makeDirFSTree(t)
	f, err := DirFS(dir).Open("a/b/12345")
	require.NoError(t, err)
	defer f.Close()
	ra, ok := f.(io.ReaderAt)
	require.True(t, ok)
	data := want["a/b/12345"]

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			buf := make([]byte, 1000+g*37)
			for off := int64(g); off < int64(len(data)); off += 333 {
				n, err := ra.ReadAt(buf, off)
				end := min(off+int64(len(buf)), int64(len(data)))
				if int64(n) != end-off || !bytes.Equal(buf[:n], data[off:end]) {
					errs <- errors.New("ReadAt returned wrong bytes")
					return
				}
				if n < len(buf) && err != io.EOF {
					errs <- errors.New("short ReadAt without io.EOF")
					return
				}
				if n == len(buf) && err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestDirFSReadAllFromOffset: readAll reads from the offset to io.EOF,
// although its buffer is sized for the whole file.
func TestDirFSReadAllFromOffset(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789"), 1000)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), data, 0o644))
	got, err := dirFSReadAllFrom(t, filepath.Join(dir, "f"), 5000)
	require.NoError(t, err)
	require.Equal(t, data[5000:], got)
}

// dirFSReadAllFrom is readAll from offset off of the named file.
func dirFSReadAllFrom(t *testing.T, name string, off int64) ([]byte, error) {
	t.Helper()
	f, err := Open(name)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Seek(off, io.SeekStart)
	require.NoError(t, err)
	return readAll(f)
}
