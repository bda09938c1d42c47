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
// stream) would; onlyReader (stream_bench_test.go) hides WriterTo.
type onlyWriter struct{ io.Writer }

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
	}},
	{"regular-misc", func(t *testing.T, im impl, dir string, tr *transcript) {
		path := filepath.Join(dir, "f")
		f, err := im.open(path, os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		defer f.Close()
		if df, ok := f.(*File); ok && df.Direct() != (im.name == "diskio-direct") {
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
		// wraps it in an *IOError naming the caller's offset and length.
		f, err := im.open(filepath.Join(dir, "f"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		defer f.Close()
		for _, off := range []int64{1 << 62, 1<<62 + 4096} {
			n, err := f.WriteAt([]byte("x"), off)
			var pe *fs.PathError
			require.ErrorAs(t, err, &pe)
			tr.add("writeat %d: %d %v; errno == EFBIG %v, errors.Is %v", off, n, pe, pe.Err == syscall.EFBIG, errors.Is(err, syscall.EFBIG))
			if ioe, ok := err.(*IOError); ok {
				require.Contains(t, err.Error(), fmt.Sprintf(" at offset %d (1 bytes): file too large", off))
				require.Equal(t, off, ioe.Off)
				var sioe *sched.IOError // the request as issued, still reachable
				require.ErrorAs(t, err, &sioe)
			} else {
				require.Equal(t, "os", im.name, "diskio's kernel error is not an *IOError: %#v", err)
			}
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
	{"nil", func(t *testing.T, im impl, dir string, tr *transcript) {
		allMethods(tr, im.nil)
		tr.add("name panics %v", panics(func() { im.nil.Name() }))
	}},
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
	tr.add("Fd %x", f.Fd())
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
	tr.add("Close %v", f.Close())
}

// TestConformance runs every scenario on os.File and on File and requires
// the same transcript: values, error texts, error types and errnos.
func TestConformance(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var got []*transcript
			for _, im := range impls {
				dir := t.TempDir()
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
