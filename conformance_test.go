//go:build linux

package diskio

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/sched"
)

// osLike is what a user of *os.File calls; both implement it.
type osLike interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.StringWriter
	io.Seeker
	io.Closer
	io.ReaderFrom
	io.WriterTo
	Name() string
	Fd() uintptr
	Stat() (fs.FileInfo, error)
	Truncate(int64) error
	Sync() error
	ReadDir(int) ([]fs.DirEntry, error)
	Readdir(int) ([]fs.FileInfo, error)
	Readdirnames(int) ([]string, error)
	Chmod(fs.FileMode) error
	Chown(uid, gid int) error
	Chdir() error
	SyscallConn() (syscall.RawConn, error)
	SetDeadline(time.Time) error
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

var (
	_ osLike = (*os.File)(nil)
	_ osLike = (*File)(nil)
)

// impl opens files one way: os, or diskio.
type impl struct {
	name string
	open func(name string, flag int, perm fs.FileMode) (osLike, error)
	nil  osLike // a nil *os.File or *File, in the interface
}

var impls = []impl{
	{"os", func(n string, fl int, p fs.FileMode) (osLike, error) { return os.OpenFile(n, fl, p) }, (*os.File)(nil)},
	{"diskio", func(n string, fl int, p fs.FileMode) (osLike, error) {
		f, err := OpenFile(n, fl, p)
		if err != nil {
			return nil, err // not a typed nil
		}
		return f, nil
	}, (*File)(nil)},
	{"diskio-direct", func(n string, fl int, p fs.FileMode) (osLike, error) {
		f, err := OpenFile(n, fl, p, WithDirect(Direct))
		if err != nil {
			return nil, err // not a typed nil
		}
		return f, nil
	}, (*File)(nil)},
	// Classified: its writes that would block are made by their callers
	// (sched's RWF_NOWAIT path and its per-file hint).
	{"diskio-direct-background", func(n string, fl int, p fs.FileMode) (osLike, error) {
		f, err := OpenFile(n, fl, p, WithDirect(Direct), WithClass(sched.Background))
		if err != nil {
			return nil, err // not a typed nil
		}
		return f, nil
	}, (*File)(nil)},
}

// transcript records what a scenario saw, as text, with the scenario's
// directory replaced, so that the two runs compare equal.
type transcript struct {
	dir   string
	lines []string
}

func (tr *transcript) add(format string, args ...any) {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = describeErr(err)
		}
	}
	tr.lines = append(tr.lines, strings.ReplaceAll(fmt.Sprintf(format, args...), tr.dir, "$DIR"))
}

// describeErr is an error's text, type chain and errno, all of which a
// caller may look at.
func describeErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := fmt.Sprintf("%q %T", err.Error(), err)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		s += fmt.Sprintf(" op=%s errT=%T", pe.Op, pe.Err)
		if en, ok := pe.Err.(syscall.Errno); ok {
			s += fmt.Sprintf(" errno=%d", int(en))
		}
	}
	for _, target := range []error{os.ErrClosed, os.ErrInvalid, os.ErrNotExist, os.ErrPermission, io.EOF, os.ErrNoDeadline} {
		if errors.Is(err, target) {
			s += " is(" + target.Error() + ")"
		}
	}
	return s
}

func hashOf(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b))[:16] }

// onlyWriter hides ReaderFrom, as a plain io.Writer (a hash, a network
// stream) would; onlyReader hides WriterTo.
type (
	onlyWriter struct{ io.Writer }
	onlyReader struct{ io.Reader }
)

// conformanceData is a file of an awkward size: three chunks of the copy
// and an unaligned tail.
func conformanceData() []byte { return randomBytes(3<<20+4321, 7) }

var scenarios = []struct {
	name string
	run  func(t *testing.T, im impl, dir string, tr *transcript)
}{
	{"copy-in", func(t *testing.T, im impl, dir string, tr *transcript) {
		data := conformanceData()
		f, err := im.open(filepath.Join(dir, "dst"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		require.NoError(t, err)
		defer f.Close()
		_, err = f.WriteString("head")
		tr.add("write %v", err)
		n, err := io.Copy(f, onlyReader{bytes.NewReader(data)})
		tr.add("copy from reader %d %v", n, err)
		pos, err := f.Seek(0, io.SeekCurrent)
		tr.add("cursor %d %v", pos, err)
		src := filepath.Join(dir, "src")
		require.NoError(t, os.WriteFile(src, data, 0o644))
		in, err := os.Open(src)
		require.NoError(t, err)
		defer in.Close()
		in.Seek(100, io.SeekStart)
		n, err = io.Copy(f, in)
		tr.add("copy from *os.File %d %v", n, err)
		fi, err := f.Stat()
		tr.add("size %d %v", fi.Size(), err)
		// Another reader, before any Sync: the exact bytes, no padding.
		got, err := os.ReadFile(filepath.Join(dir, "dst"))
		tr.add("content %d %s %v", len(got), hashOf(got), err)
	}},
	{"copy-out", func(t *testing.T, im impl, dir string, tr *transcript) {
		data := conformanceData()
		path := filepath.Join(dir, "src")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		f, err := im.open(path, os.O_RDONLY, 0)
		require.NoError(t, err)
		defer f.Close()
		var buf bytes.Buffer
		f.Seek(5, io.SeekStart)
		n, err := io.Copy(onlyWriter{&buf}, f)
		tr.add("copy to writer %d %s %v", n, hashOf(buf.Bytes()), err)
		n, err = io.Copy(onlyWriter{&buf}, f)
		tr.add("again at end %d %v", n, err)
		f.Seek(1<<20+1, io.SeekStart)
		out, err := os.Create(filepath.Join(dir, "out"))
		require.NoError(t, err)
		defer out.Close()
		n, err = io.Copy(out, f)
		tr.add("copy to *os.File %d %v", n, err)
		got, _ := os.ReadFile(filepath.Join(dir, "out"))
		tr.add("content %s", hashOf(got))
		n, err = io.CopyN(io.Discard, io.NewSectionReader(f, 10, 100), 1000)
		tr.add("section %d %v", n, err)
	}},
	{"copy-between", func(t *testing.T, im impl, dir string, tr *transcript) {
		data := conformanceData()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "src"), data, 0o644))
		src, err := im.open(filepath.Join(dir, "src"), os.O_RDONLY, 0)
		require.NoError(t, err)
		defer src.Close()
		dst, err := im.open(filepath.Join(dir, "dst"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		require.NoError(t, err)
		defer dst.Close()
		for _, start := range []int64{0, 1000, 1 << 20, int64(len(data))} {
			src.Seek(start, io.SeekStart)
			dst.Seek(start+7, io.SeekStart)
			n, err := io.Copy(dst, src)
			sp, _ := src.Seek(0, io.SeekCurrent)
			dp, _ := dst.Seek(0, io.SeekCurrent)
			fi, _ := dst.Stat()
			tr.add("copy from %d: %d %v cursors %d %d size %d", start, n, err, sp, dp, fi.Size())
		}
		got := make([]byte, len(data)+7)
		n, err := dst.ReadAt(got, 0)
		tr.add("read back %d %s %v", n, hashOf(got[:n]), err)
		ro, err := im.open(filepath.Join(dir, "src"), os.O_RDONLY, 0)
		require.NoError(t, err)
		defer ro.Close()
		src.Seek(0, io.SeekStart)
		n64, err := io.Copy(ro, src)
		tr.add("copy into read-only %d %v", n64, err)
	}},
	{"bufio", func(t *testing.T, im impl, dir string, tr *transcript) {
		path := filepath.Join(dir, "lines")
		f, err := im.open(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		require.NoError(t, err)
		w := bufio.NewWriterSize(f, 1000)
		for i := range 5000 {
			fmt.Fprintf(w, "line %d %s\n", i, strings.Repeat("x", i%97))
		}
		tr.add("flush %v", w.Flush())
		tr.add("close %v", f.Close())
		f, err = im.open(path, os.O_RDONLY, 0)
		require.NoError(t, err)
		defer f.Close()
		sc := bufio.NewScanner(f)
		lines, h := 0, sha256.New()
		for sc.Scan() {
			lines++
			h.Write(sc.Bytes())
		}
		tr.add("scan %d %x %v", lines, h.Sum(nil)[:8], sc.Err())
		f.Seek(-20, io.SeekEnd)
		r := bufio.NewReader(f)
		s, err := r.ReadString('\n')
		tr.add("tail %q %v", s, err)
		s, err = r.ReadString('\n')
		tr.add("past end %q %v", s, err)
	}},
	{"fifo", func(t *testing.T, im impl, dir string, tr *transcript) {
		path := filepath.Join(dir, "fifo")
		require.NoError(t, unix.Mkfifo(path, 0o644))
		msg := strings.Repeat("through a pipe\n", 1000)
		done := make(chan error, 1)
		go func() {
			w, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err == nil {
				_, err = w.WriteString(msg)
				w.Close()
			}
			done <- err
		}()
		f, err := im.open(path, os.O_RDONLY, 0)
		require.NoError(t, err)
		defer f.Close()
		_, err = f.ReadAt(make([]byte, 10), 0)
		tr.add("readat %v", err)
		_, err = f.Seek(0, io.SeekCurrent)
		tr.add("seek %v", err)
		got, err := io.ReadAll(f)
		tr.add("read all %d %v %v", len(got), string(got) == msg, err)
		require.NoError(t, <-done)
		fi, err := f.Stat()
		tr.add("stat %v %v", fi.Mode(), err)
		tr.add("deadline %v", f.SetReadDeadline(time.Now()))
		n, err := f.Read(make([]byte, 10))
		tr.add("read at end %d %v", n, err)
	}},
	{"dev-zero", func(t *testing.T, im impl, dir string, tr *transcript) {
		f, err := im.open("/dev/zero", os.O_RDONLY, 0)
		require.NoError(t, err)
		defer f.Close()
		b := bytes.Repeat([]byte{1}, 5000)
		n, err := f.Read(b)
		tr.add("read %d %v zeros=%v", n, err, bytes.Count(b, []byte{0}))
		n, err = f.ReadAt(b[:333], 1<<40+3)
		tr.add("readat %d %v", n, err)
		n64, err := io.CopyN(io.Discard, f, 3<<20)
		tr.add("copyN %d %v", n64, err)
		fi, err := f.Stat()
		tr.add("stat %v %d %v", fi.Mode(), fi.Size(), err)
		tr.add("deadline %v", f.SetDeadline(time.Now()))
	}},
	{"directory", func(t *testing.T, im impl, dir string, tr *transcript) {
		d := filepath.Join(dir, "d")
		require.NoError(t, os.Mkdir(d, 0o755))
		for _, n := range []string{"b", "a", "c"} {
			require.NoError(t, os.WriteFile(filepath.Join(d, n), []byte(n), 0o644))
		}
		f, err := im.open(d, os.O_RDONLY, 0)
		require.NoError(t, err)
		defer f.Close()
		n, err := f.Read(make([]byte, 10))
		tr.add("read %d %v", n, err)
		var pe *fs.PathError
		tr.add("errno == EISDIR %v, errors.Is %v", errors.As(err, &pe) && pe.Err == syscall.EISDIR, errors.Is(err, syscall.EISDIR))
		ents, err := f.ReadDir(-1)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name()+":"+e.Type().String())
		}
		slices.Sort(names)
		tr.add("readdir %v %v", names, err)
		ents, err = f.ReadDir(1)
		tr.add("readdir again %d %v", len(ents), err)
		f.Seek(0, io.SeekStart)
		nm, err := f.Readdirnames(-1)
		slices.Sort(nm)
		tr.add("readdirnames %v %v", nm, err)
		f.Seek(0, io.SeekStart)
		fis, err := f.Readdir(2)
		tr.add("readdir(2) %d %v", len(fis), err)
		fi, err := f.Stat()
		tr.add("stat dir=%v %v", fi.IsDir(), err)
		_, err = f.Write([]byte("x"))
		tr.add("write %v", err)
		// Seek restarts a listing that stopped part way.
		f.Seek(0, io.SeekStart)
		ents, err = f.ReadDir(1)
		tr.add("readdir(1) %d %v", len(ents), err)
		pos, err := f.Seek(0, io.SeekStart)
		tr.add("seek %d %v", pos, err)
		ents, err = f.ReadDir(-1)
		tr.add("readdir after seek %d %v", len(ents), err)
		// Reading at the end of a listing: the offset is the
		// directory's end cookie, where a read overflows (EINVAL).
		n, err = f.Read(make([]byte, 10))
		tr.add("read after listing %d %v", n, err)
	}},
	{"regular-misc", func(t *testing.T, im impl, dir string, tr *transcript) {
		path := filepath.Join(dir, "f")
		f, err := im.open(path, os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		defer f.Close()
		if df, ok := f.(*File); ok && df.Direct() != strings.HasPrefix(im.name, "diskio-direct") {
			t.Fatalf("%s: Direct() = %v: the scenarios would not test it", im.name, df.Direct())
		}
		_, err = f.Write(randomBytes(1000, 3)) // unaligned
		tr.add("write %v", err)
		fi, err := f.Stat() // a genuine os FileInfo, with the logical size
		tr.add("stat size %d %v", fi.Size(), err)
		fi2, err := os.Stat(path)
		tr.add("os.SameFile %v %v", os.SameFile(fi, fi2), err)
		tr.add("os.Stat size before Sync %d", fi2.Size())
		tr.add("sys size %d", fi.Sys().(*syscall.Stat_t).Size)
		tr.add("sync %v", f.Sync())
		fi, err = f.Stat()
		tr.add("stat size %d %v", fi.Size(), err)
		_, err = f.ReadDir(-1)
		tr.add("readdir %v", err)
		tr.add("chmod %v", f.Chmod(0o600))
		fi, _ = f.Stat()
		tr.add("mode %v", fi.Mode())
		tr.add("chown %v", f.Chown(-1, -1))
		tr.add("chdir %v", f.Chdir())
		tr.add("deadlines %v %v %v", f.SetDeadline(time.Now()), f.SetReadDeadline(time.Time{}), f.SetWriteDeadline(time.Now()))
		rc, err := f.SyscallConn()
		tr.add("syscallconn %v", err)
		var st unix.Stat_t
		cerr := rc.Control(func(fd uintptr) { err = unix.Fstat(int(fd), &st) })
		tr.add("control %v %v ino-match %v", cerr, err, st.Ino == fi.Sys().(*syscall.Stat_t).Ino)
		ro, err := im.open(path, os.O_RDONLY, 0)
		require.NoError(t, err)
		defer ro.Close()
		_, err = ro.Write([]byte("x"))
		var pe *fs.PathError
		tr.add("write read-only %v; errno == EBADF %v", err, errors.As(err, &pe) && pe.Err == syscall.EBADF)
		_, err = ro.ReadAt(make([]byte, 10), -1)
		tr.add("negative readat %v", err)
		n, err := ro.ReadAt(make([]byte, 10), 995)
		tr.add("readat past end %d %v", n, err)
		wo, err := im.open(path, os.O_WRONLY, 0)
		require.NoError(t, err)
		defer wo.Close()
		_, err = wo.Read(make([]byte, 10))
		tr.add("read write-only %v; is EBADF %v", err, errors.Is(err, syscall.EBADF))
		ap, err := im.open(path, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		defer ap.Close()
		_, err = ap.WriteAt([]byte("x"), 0)
		tr.add("writeat append %v", err)
		n64, err := ap.ReadFrom(strings.NewReader("appended"))
		tr.add("append readfrom %d %v", n64, err)
		tr.add("sync %v", ap.Sync())
		got, err := os.ReadFile(path)
		tr.add("content %d %s %v", len(got), hashOf(got), err)
	}},
	{"kernel-error", func(t *testing.T, im impl, dir string, tr *transcript) {
		// EFBIG comes from the kernel (the scheduler's request): os.File's
		// PathError, reached with errors.As, Err the bare errno. diskio
		// puts one *IOError naming the caller's offset and length over
		// it, and nothing else: below the IOError, the chain is os.File's.
		// A tmpfs file may be 8 EiB long: there both writes succeed.
		f, err := im.open(filepath.Join(dir, "f"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		defer f.Close()
		var st unix.Statfs_t
		require.NoError(t, unix.Statfs(dir, &st))
		for _, off := range []int64{1 << 62, 1<<62 + 4096} {
			n, err := f.WriteAt([]byte("x"), off)
			if st.Type == unix.TMPFS_MAGIC {
				tr.add("writeat %d: %d %v", off, n, err)
				continue
			}
			var pe *fs.PathError
			require.ErrorAs(t, err, &pe)
			tr.add("writeat %d: %d %v; errno == EFBIG %v, errors.Is %v", off, n, pe, pe.Err == syscall.EFBIG, errors.Is(err, syscall.EFBIG))
			if ioe, ok := err.(*IOError); ok {
				require.Contains(t, err.Error(), fmt.Sprintf(" at offset %d (1 bytes): file too large", off))
				require.Equal(t, off, ioe.Off)
				require.Equal(t, 1, ioe.Len)
				err = errors.Unwrap(err)
			} else {
				require.Equal(t, "os", im.name, "diskio's kernel error is not an *IOError: %#v", err)
			}
			var chain []string
			for e := err; e != nil; e = errors.Unwrap(e) {
				chain = append(chain, fmt.Sprintf("%T", e))
			}
			tr.add("chain %v", chain)
		}
	}},
	{"closed", func(t *testing.T, im impl, dir string, tr *transcript) {
		path := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(path, []byte("data"), 0o644))
		f, err := im.open(path, os.O_RDWR, 0)
		require.NoError(t, err)
		tr.add("close %v", f.Close())
		allMethods(tr, f)
		tr.add("name %q", f.Name())
	}},
	{"closed-dir", func(t *testing.T, im impl, dir string, tr *transcript) {
		f, err := im.open(dir, os.O_RDONLY, 0)
		require.NoError(t, err)
		tr.add("close %v", f.Close())
		allMethods(tr, f)
	}},
	{"open", func(t *testing.T, im impl, dir string, tr *transcript) {
		path := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(path, []byte("0123456789abcdef"), 0o644))
		f, err := im.open(path, os.O_RDWR, 0)
		require.NoError(t, err)
		allMethods(tr, f)
		got, err := os.ReadFile(path)
		tr.add("content %q %v", got, err)
	}},
	{"open-fifo", func(t *testing.T, im impl, dir string, tr *transcript) {
		allMethods(tr, openFIFO(t, im, dir))
	}},
	{"open-device", func(t *testing.T, im impl, dir string, tr *transcript) {
		allMethods(tr, openNullDevice(t, im, dir))
	}},
	{"open-dir", func(t *testing.T, im impl, dir string, tr *transcript) {
		allMethods(tr, openDir(t, im, dir))
	}},
	{"closed-fifo", func(t *testing.T, im impl, dir string, tr *transcript) {
		f := openFIFO(t, im, dir)
		tr.add("close %v", f.Close())
		allMethods(tr, f)
	}},
	{"closed-device", func(t *testing.T, im impl, dir string, tr *transcript) {
		f := openNullDevice(t, im, dir)
		tr.add("close %v", f.Close())
		allMethods(tr, f)
	}},
	{"nil", func(t *testing.T, im impl, dir string, tr *transcript) {
		allMethods(tr, im.nil)
		tr.add("name panics %v", panics(func() { im.nil.Name() }))
	}},
}

// openFIFO opens a FIFO in dir for reading and writing, with 32 bytes
// waiting in it.
func openFIFO(t *testing.T, im impl, dir string) osLike {
	path := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(path, 0o644))
	f, err := im.open(path, os.O_RDWR, 0)
	require.NoError(t, err)
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = w.WriteString("fifo data, thirty-two bytes long")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return f
}

// openNullDevice opens a node of the null device (1, 3) made in dir: its
// mode may be changed by the test, where /dev/null's must not be.
func openNullDevice(t *testing.T, im impl, dir string) osLike {
	path := filepath.Join(dir, "null")
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("mknod: %v", err)
	}
	f, err := im.open(path, os.O_RDWR, 0)
	require.NoError(t, err)
	return f
}

// openDir opens a directory of three files in dir; the test's working
// directory is restored at its end (Chdir).
func openDir(t *testing.T, im impl, dir string) osLike {
	d := filepath.Join(dir, "d")
	require.NoError(t, os.Mkdir(d, 0o755))
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, os.WriteFile(filepath.Join(d, n), []byte(n), 0o644))
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	t.Cleanup(func() { os.Chdir(wd) })
	f, err := im.open(d, os.O_RDONLY, 0)
	require.NoError(t, err)
	return f
}

func panics(fn func()) (p bool) {
	defer func() { p = recover() != nil }()
	fn()
	return false
}

// allMethods calls every method of f and records what each returns.
func allMethods(tr *transcript, f osLike) {
	b := make([]byte, 8)
	n, err := f.Read(b)
	tr.add("Read %d %v", n, err)
	n, err = f.ReadAt(b, 0)
	tr.add("ReadAt %d %v", n, err)
	n, err = f.ReadAt(b, -1)
	tr.add("ReadAt negative %d %v", n, err)
	n, err = f.Write(b)
	tr.add("Write %d %v", n, err)
	n, err = f.WriteAt(b, 0)
	tr.add("WriteAt %d %v", n, err)
	n, err = f.WriteString("s")
	tr.add("WriteString %d %v", n, err)
	pos, err := f.Seek(0, io.SeekStart)
	tr.add("Seek %d %v", pos, err)
	fi, err := f.Stat()
	tr.add("Stat %v %v", fi == nil, err)
	tr.add("Truncate %v", f.Truncate(0))
	tr.add("Sync %v", f.Sync())
	ents, err := f.ReadDir(-1)
	tr.add("ReadDir %d %v", len(ents), err)
	fis, err := f.Readdir(-1)
	tr.add("Readdir %d %v", len(fis), err)
	names, err := f.Readdirnames(-1)
	tr.add("Readdirnames %d %v", len(names), err)
	tr.add("Chmod %v", f.Chmod(0o644))
	tr.add("Chown %v", f.Chown(-1, -1))
	tr.add("Chdir %v", f.Chdir())
	rc, err := f.SyscallConn()
	tr.add("SyscallConn %v %v", rc == nil, err)
	if rc != nil {
		tr.add("Control %v", rc.Control(func(uintptr) {}))
	}
	tr.add("SetDeadline %v", f.SetDeadline(time.Now()))
	tr.add("SetReadDeadline %v", f.SetReadDeadline(time.Now()))
	tr.add("SetWriteDeadline %v", f.SetWriteDeadline(time.Now()))
	n64, err := f.ReadFrom(strings.NewReader("x"))
	tr.add("ReadFrom %d %v", n64, err)
	n64, err = f.WriteTo(io.Discard)
	tr.add("WriteTo %d %v", n64, err)
	n64, err = io.Copy(f, strings.NewReader("y"))
	tr.add("io.Copy in %d %v", n64, err)
	n64, err = io.Copy(io.Discard, f)
	tr.add("io.Copy out %d %v", n64, err)
	// Last: on a FIFO, Fd puts the descriptor in blocking mode, and a
	// read after it would wait for ever.
	tr.add("Fd valid %v", f.Fd() != ^uintptr(0))
	tr.add("Close %v", f.Close())
}

// TestConformance runs every scenario on os.File and on File and requires
// the same transcript: values, error texts, error types and errnos.
func TestConformance(t *testing.T) { conformance(t, (*testing.T).TempDir) }

// TestConformanceTmpfs is TestConformance on a tmpfs, where a File's
// reads and writes take their own route: copies in memory, made on the
// caller.
func TestConformanceTmpfs(t *testing.T) { conformance(t, tmpfsDirs(t)) }

// tmpfsDirs returns a function that makes a new directory on the tmpfs
// at /dev/shm, removed when the test given to it ends. It skips t where
// /dev/shm is not a tmpfs.
func tmpfsDirs(t *testing.T) func(*testing.T) string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil {
		t.Skipf("no tmpfs at /dev/shm (%v): this variant needs one", err)
	}
	if st.Type != unix.TMPFS_MAGIC {
		t.Skipf("no tmpfs at /dev/shm (its statfs type is %#x, not TMPFS_MAGIC): this variant needs one", st.Type)
	}
	return func(t *testing.T) string {
		dir, err := os.MkdirTemp("/dev/shm", "diskio-conformance-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
}

// conformance runs every scenario of TestConformance, each
// implementation in a new directory from newDir.
func conformance(t *testing.T, newDir func(*testing.T) string) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var got []*transcript
			for _, im := range impls {
				dir := newDir(t)
				tr := &transcript{dir: dir}
				sc.run(t, im, dir, tr)
				got = append(got, tr)
			}
			for i := 1; i < len(got); i++ {
				require.Equal(t, got[0].lines, got[i].lines, "os (expected) against %s (actual)", impls[i].name)
			}
			if testing.Verbose() {
				t.Log(strings.Join(got[1].lines, "\n"))
			}
		})
	}
}

// The methods os.File does not have, and the streams'. No oracle to
// compare with: instead the default (page cache) and Direct must agree,
// except where the mode is the answer (modeSpecific, on an open regular
// file), and each state keeps its contract: a nil File or stream gives
// os.ErrInvalid, a closed one os.ErrClosed (a *fs.PathError naming the
// file), and none panics.

// extraMethod calls one method and returns what it saw: a transcript
// line, and the errors the state's contract applies to.
type extraMethod struct {
	name         string
	modeSpecific bool
	call         func(f *File) (string, []error)
}

func one(format string, v any, err error) (string, []error) {
	return fmt.Sprintf(format, v, describeErr(err)), []error{err}
}

// bufferText describes Buffers and releases them.
func bufferText(bufs ...*Buffer) string {
	var parts []string
	for _, b := range bufs {
		parts = append(parts, fmt.Sprintf("%q", b.Bytes()))
		b.Release()
	}
	return strings.Join(parts, ",")
}

var extraMethods = []extraMethod{
	{"Direct", true, func(f *File) (string, []error) { return fmt.Sprint(f.Direct()), nil }},
	{"Alignment", true, func(f *File) (string, []error) { return fmt.Sprint(f.Alignment() > 1), nil }},
	{"Prefetch", false, func(f *File) (string, []error) { return one("%v%s", "", f.Prefetch(0, 4096)) }},
	{"Advise", false, func(f *File) (string, []error) { return one("%v%s", "", f.Advise(0, 4096, AdviceDontNeed)) }},
	{"Preallocate", false, func(f *File) (string, []error) { return one("%v%s", "", f.Preallocate(0, 4096)) }},
	{"PreallocateKeepSize", false, func(f *File) (string, []error) { return one("%v%s", "", f.PreallocateKeepSize(0, 8192)) }},
	{"Datasync", false, func(f *File) (string, []error) { return one("%v%s", "", f.Datasync()) }},
	{"WriteAtDSync", false, func(f *File) (string, []error) {
		n, err := f.WriteAtDSync([]byte("dsync"), 3)
		return one("%d %s", n, err)
	}},
	{"ReadBuffer", false, func(f *File) (string, []error) {
		b, err := f.ReadBuffer(1, 6)
		if b == nil {
			return one("%v %s", "nil", err)
		}
		return one("%s %s", bufferText(b), err)
	}},
	{"ReadMany", false, func(f *File) (string, []error) {
		bufs, err := f.ReadMany([]Range{{0, 4}, {2, 4}, {4000, 8}}, ReadManyOptions{})
		return one("%s %s", bufferText(bufs...), err)
	}},
	{"ReadMany NoMerge", false, func(f *File) (string, []error) {
		bufs, err := f.ReadMany([]Range{{5, 3}}, ReadManyOptions{MaxMerge: NoMerge})
		return one("%s %s", bufferText(bufs...), err)
	}},
	{"OSFile", false, func(f *File) (string, []error) {
		o, err := f.OSFile()
		if o == nil {
			return one("%v %s", "nil", err)
		}
		fi, serr := o.Stat()
		o.Close()
		return fmt.Sprintf("mode %v %v %s", fi.Mode(), serr, describeErr(err)), []error{err}
	}},
	{"NewStreamReader", false, func(f *File) (string, []error) {
		r, err := f.NewStreamReader(0, StreamOptions{BufferSize: 4096, ReadAhead: 2})
		line, errs := streamReaderText(r)
		return fmt.Sprintf("%s; %s", describeErr(err), line), streamErrs(r == nil, err, errs)
	}},
	{"NewStreamWriter", false, func(f *File) (string, []error) {
		w, err := f.NewStreamWriter(1, StreamOptions{BufferSize: 4096, ReadAhead: 2})
		line, errs := streamWriterText(w)
		return fmt.Sprintf("%s; %s", describeErr(err), line), streamErrs(w == nil, err, errs)
	}},
	// Last: a page-cache File that OpenFile did not tell apart learns
	// its kind from the calls above.
	{"nowait", true, func(f *File) (string, []error) { return f.nowait().String(), nil }},
}

// streamErrs are the errors a NewStream* call's state contract applies
// to: the constructor's, and its stream's methods' when it made one. The
// methods of a nil stream (the constructor failed) must say
// os.ErrInvalid whatever the File's state: a wrapped nil error fails the
// contract of every state.
func streamErrs(nilStream bool, err error, methods []error) []error {
	if !nilStream {
		return append(methods, err)
	}
	for _, e := range methods {
		if !errors.Is(e, os.ErrInvalid) {
			return []error{err, fmt.Errorf("a nil stream's method returned %v, not os.ErrInvalid", e)}
		}
	}
	return []error{err}
}

// streamReaderMethods and streamWriterMethods call every method of a
// stream, in order.
var streamReaderMethods = []string{"Read", "NextBuffer", "Close"}

func streamReaderText(r *StreamReader) (string, []error) {
	b := make([]byte, 5)
	n, rerr := r.Read(b)
	buf, berr := r.NextBuffer()
	got := "nil"
	if buf != nil {
		got = fmt.Sprintf("%d bytes", len(buf.Bytes()))
		buf.Release()
	}
	cerr := r.Close()
	n2, rerr2 := r.Read(b) // after Close
	return fmt.Sprintf("Read %d %q %s; NextBuffer %s %s; Close %s; Read %d %s", n, b[:n], describeErr(rerr), got, describeErr(berr),
		describeErr(cerr), n2, describeErr(rerr2)), []error{rerr, berr, cerr}
}

var streamWriterMethods = []string{"Write", "Flush", "Sync", "Close"}

func streamWriterText(w *StreamWriter) (string, []error) {
	n, werr := w.Write([]byte("streamed"))
	ferr := w.Flush()
	serr := w.Sync()
	cerr := w.Close()
	_, werr2 := w.Write([]byte("x")) // after Close
	ferr2 := w.Flush()
	return fmt.Sprintf("Write %d %s; Flush %s; Sync %s; Close %s; Write %s; Flush %s", n, describeErr(werr), describeErr(ferr),
		describeErr(serr), describeErr(cerr), describeErr(werr2), describeErr(ferr2)), []error{werr, ferr, serr, cerr}
}

// TestConformanceMethodsCovered: every exported method of File is in
// osLike (compared with os.File) or in extraMethods, and every method of
// the streams in their tables: a new method must say what it does on a
// closed, nil and non-regular file.
func TestConformanceMethodsCovered(t *testing.T) {
	covered := map[string]bool{}
	osT := reflect.TypeFor[osLike]()
	for i := range osT.NumMethod() {
		covered[osT.Method(i).Name] = true
	}
	for _, m := range extraMethods {
		covered[m.name] = true
	}
	ft := reflect.TypeFor[*File]()
	for i := range ft.NumMethod() {
		require.True(t, covered[ft.Method(i).Name], "File.%s is in no conformance table", ft.Method(i).Name)
	}
	for typ, names := range map[reflect.Type][]string{
		reflect.TypeFor[*StreamReader](): streamReaderMethods,
		reflect.TypeFor[*StreamWriter](): streamWriterMethods,
	} {
		require.Equal(t, typ.NumMethod(), len(names), "%v", typ)
		for _, n := range names {
			_, ok := typ.MethodByName(n)
			require.True(t, ok, "%v.%s", typ, n)
		}
	}
}

// extraState is a File in one of the states the extras are run in.
type extraState struct {
	name string
	// open returns the File (nil for the nil state); closed says
	// whether it is closed before the calls.
	open   func(t *testing.T, mode DirectMode, dir string) *File
	closed bool
}

func openExtra(open func(t *testing.T, im impl, dir string) osLike) func(t *testing.T, mode DirectMode, dir string) *File {
	return func(t *testing.T, mode DirectMode, dir string) *File {
		im := impl{open: func(n string, fl int, p fs.FileMode) (osLike, error) {
			f, err := OpenFile(n, fl, p, WithDirect(mode))
			if err != nil {
				return nil, err
			}
			return f, nil
		}}
		return open(t, im, dir).(*File)
	}
}

func openRegularExtra(t *testing.T, mode DirectMode, dir string) *File {
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("0123456789abcdef"), 0o644))
	f, err := OpenFile(path, os.O_RDWR, 0, WithDirect(mode))
	require.NoError(t, err)
	return f
}

var extraStates = []extraState{
	{"open", openRegularExtra, false},
	{"closed", openRegularExtra, true},
	{"nil", func(*testing.T, DirectMode, string) *File { return nil }, false},
	{"open-fifo", openExtra(openFIFO), false},
	{"open-device", openExtra(openNullDevice), false},
	{"open-dir", openExtra(openDir), false},
	{"closed-fifo", openExtra(openFIFO), true},
	{"closed-device", openExtra(openNullDevice), true},
	{"closed-dir", openExtra(openDir), true},
}

// TestConformanceExtras runs every method os.File lacks, and the
// streams', on open, closed, nil and non-regular Files, in the default
// mode and Direct.
func TestConformanceExtras(t *testing.T) { conformanceExtras(t, (*testing.T).TempDir) }

// TestConformanceExtrasTmpfs is TestConformanceExtras on a tmpfs.
func TestConformanceExtrasTmpfs(t *testing.T) { conformanceExtras(t, tmpfsDirs(t)) }

// conformanceExtras runs TestConformanceExtras's cases, each mode in a
// new directory from newDir.
func conformanceExtras(t *testing.T, newDir func(*testing.T) string) {
	for _, st := range extraStates {
		t.Run(st.name, func(t *testing.T) {
			var got [][]string
			for _, mode := range []DirectMode{PageCache, Direct} {
				dir := newDir(t)
				tr := &transcript{dir: dir}
				f := st.open(t, mode, dir)
				if st.closed {
					require.NoError(t, f.Close())
				}
				for _, m := range extraMethods {
					var line string
					var errs []error
					noPanic(t, m.name, func() { line, errs = m.call(f) })
					if m.modeSpecific && (st.name == "open" || st.name == "closed" && m.name != "Nowait") {
						line = "(depends on the mode)"
					}
					tr.add("%s: %s", m.name, line)
					for _, err := range errs {
						switch {
						case f == nil:
							require.ErrorIs(t, err, os.ErrInvalid, "%s on a nil File", m.name)
						case st.closed:
							require.ErrorIs(t, err, os.ErrClosed, "%s on a closed File", m.name)
							var pe *fs.PathError
							require.ErrorAs(t, err, &pe, "%s", m.name)
							require.Equal(t, f.Name(), pe.Path, "%s", m.name)
						}
					}
				}
				if f != nil && !st.closed {
					tr.add("Close %v", f.Close())
					if st.name == "open" {
						got, err := os.ReadFile(f.Name())
						tr.add("content %q %v", got, err)
					}
				}
				got = append(got, tr.lines)
			}
			require.Equal(t, got[0], got[1], "the default (expected) against Direct (actual)")
			if testing.Verbose() {
				t.Log(strings.Join(got[0], "\n"))
			}
		})
	}
	// A nil Buffer (what a failed ReadBuffer returns) has no bytes.
	noPanic(t, "nil Buffer", func() {
		var b *Buffer
		require.Nil(t, b.Bytes())
		b.Release()
	})
	// A stream of an open File, once the File is closed under it.
	t.Run("stream-file-closed", func(t *testing.T) {
		for _, mode := range []DirectMode{PageCache, Direct} {
			f := openRegularExtra(t, mode, newDir(t))
			r, err := f.NewStreamReader(0, StreamOptions{BufferSize: 4096, ReadAhead: 2})
			require.NoError(t, err)
			w, err := f.NewStreamWriter(0, StreamOptions{BufferSize: 4096, ReadAhead: 2})
			require.NoError(t, err)
			require.NoError(t, f.Close())
			_, errs := streamReaderText(r)
			require.ErrorIs(t, errs[0], os.ErrClosed)
			require.ErrorIs(t, errs[1], os.ErrClosed)
			require.NoError(t, errs[2])
			_, errs = streamWriterText(w)
			require.NoError(t, errs[0]) // buffered, not written yet
			for _, err := range errs[1:] {
				require.ErrorIs(t, err, os.ErrClosed)
			}
		}
	})
}
