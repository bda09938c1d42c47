//go:build linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
	"github.com/diskio-go/diskio/sched"
)

// The plain path: a File that is not a regular file (a FIFO, a pipe, a
// character or block device, a directory, a socket), or is one opened as a
// stream, without offsets (a FUSE file its filesystem opened so, a
// tracing pipe), is an *os.File and nothing more. O_DIRECT, alignment and positional reads mean nothing
// there: a FIFO is read as a stream, from the poller; a directory is
// listed, and reading it fails with EISDIR; /dev/zero never ends. os.File
// already does each of these right, so every call goes to it, and the
// results, errors included, are exactly os.File's.

// plainFile classifies osf, just opened as name, by the file's type:
// a plain File for anything but a regular file, or, for a regular one,
// the *os.File the File is to use and, if asked (stat) or needed, its
// fstat. Without stat (a page-cache File, whose open costs no system
// call more than os.OpenFile's) a descriptor the runtime does not poll is
// taken as a regular file unasked: a directory or device is not told
// apart, and the kernel gives its calls os.File's results (EISDIR for a
// directory's reads; a device's own reads, writes and offsets).
//
// A descriptor the runtime polls (SetReadDeadline takes a deadline,
// which costs no system call) is a FIFO, a pipe, a terminal or a socket,
// which stays plain, in its non-blocking mode, read as a stream from the
// poller; or a regular file whose filesystem implements poll (FUSE,
// some of procfs and sysfs), which os.OpenFile registers with the poller
// like the others. fstat tells them apart. Such a regular file is
// plain too when it has no offsets (lseek fails with ESPIPE: opened as a
// stream), and s is told (Scheduler.ReportPlain); otherwise it gets a
// descriptor off the poller (unpolled), and osf is closed.
func plainFile(name string, osf *os.File, s *sched.Scheduler, stat bool) (*os.File, *unix.Stat_t, *File, error) {
	polled := osf.SetReadDeadline(time.Time{}) == nil
	if !polled && !stat {
		return osf, nil, nil, nil
	}
	st := new(unix.Stat_t)
	var t fileType
	var err error
	if polled {
		// Fd would put a FIFO's descriptor in blocking mode.
		err = plainControl(osf, "stat", func(fd int) (err error) {
			t, err = typeOf(fd, st, true)
			return err
		})
	} else if t, err = typeOf(int(osf.Fd()), st, false); err != nil { // not polled: Fd changes no mode
		err = &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	switch {
	case err != nil:
		osf.Close()
		return nil, nil, nil, err
	case t == typeStream:
		s.ReportPlain(name, "a regular file without offsets (lseek: "+unix.ESPIPE.Error()+"), read as a stream from the runtime's poller")
		fallthrough
	case t == typeOther:
		return nil, nil, plainOf(name, osf), nil
	case polled:
		osf, err = unpolled(name, osf)
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return osf, st, nil, nil
}

// fileType is what plainFile tells apart.
type fileType int

const (
	typeRegular fileType = iota // a regular file with offsets: the scheduler's
	typeStream                  // a regular file without offsets, polled by the runtime: plain
	typeOther                   // anything but a regular file: plain
)

// typeOf fstats fd into st and says what it is; a regular file the
// runtime polls is asked for its offset (lseek), which a stream lacks.
func typeOf(fd int, st *unix.Stat_t, polled bool) (fileType, error) {
	if err := sys.Fstat(fd, st); err != nil {
		return typeOther, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return typeOther, nil
	}
	if polled {
		if _, err := sys.Seek(fd, 0, io.SeekCurrent); err == unix.ESPIPE {
			return typeStream, nil
		}
	}
	return typeRegular, nil
}

// unpolled returns an *os.File for the regular file osf has open that the
// runtime does not poll, and closes osf: a duplicate of osf's descriptor
// (the same open file description: offset, flags and locks), in blocking
// mode, which os.NewFile, as for any blocking descriptor, leaves off the
// poller. osf's Close takes its own descriptor off the poller. The
// scheduler then reads and writes the file, as any other regular file:
// a non-blocking descriptor would make io_uring fail what must wait
// (EAGAIN) instead of waiting. Deadlines are then refused
// (os.ErrNoDeadline), as for every regular file: the kernel reports such
// a file always ready, so no deadline could end one of its reads.
func unpolled(name string, osf *os.File) (*os.File, error) {
	nfd := -1
	err := plainControl(osf, "open", func(fd int) error {
		var err error
		if nfd, err = sys.Fcntl(fd, unix.F_DUPFD_CLOEXEC, 0); err != nil {
			return err
		}
		return blocking(nfd)
	})
	if err != nil {
		if nfd >= 0 {
			sys.Close(nfd)
		}
		osf.Close()
		return nil, err
	}
	nf := os.NewFile(uintptr(nfd), name)
	if err := osf.Close(); err != nil {
		nf.Close()
		return nil, err
	}
	return nf, nil
}

// blocking clears O_NONBLOCK on fd's open file description, if set.
func blocking(fd int) error {
	fl, err := sys.Fcntl(fd, unix.F_GETFL, 0)
	if err == nil && fl&unix.O_NONBLOCK != 0 {
		_, err = sys.Fcntl(fd, unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	return err
}

// plainOf is the plain File for osf. It keeps no descriptor number of
// its own (-1): every call goes through osf.
func plainOf(name string, osf *os.File) *File {
	f := &File{name: name, osf: osf, bufferedFd: -1, dataFd: -1}
	f.kind.Store(kindPlain)
	return f
}

// plain reports whether every call of f's goes to f.osf (plainOf).
func (f *File) plain() bool { return f.kind.Load() == kindPlain }

// plainPath returns the *os.File that serves f's calls when f is plain.
// A nil f gets a nil *os.File, whose methods return os.ErrInvalid (and
// whose Fd is ^uintptr(0)), as os.File's do.
func (f *File) plainPath() (*os.File, bool) {
	if f == nil {
		return nil, true
	}
	if f.plain() {
		return f.osf, true
	}
	return nil, false
}

// acquireOrPlain is acquire for the methods os.File does not have, on every kind
// of File: a nil File gets os.ErrInvalid (as os.File's methods give it),
// a closed one os.ErrClosed with op; otherwise the caller holds a
// reference until release, and plain says the File is not a regular file,
// so the method takes its plain way (on f.osf, never on a descriptor
// number: os.File's own count keeps its descriptor). A page-cache File
// opened without an fstat learns here, once, whether it is a regular
// file: a directory or a device gets these methods' plain behaviour, as
// if OpenFile had told it apart. The fstat runs under the reference, so
// it is of this File's descriptor, never of a number Close gave back.
func (f *File) acquireOrPlain(op string) (plain bool, err error) {
	if f == nil {
		return false, os.ErrInvalid
	}
	if err := f.acquire(op); err != nil {
		return false, err
	}
	switch f.kind.Load() {
	case kindRegular:
		return false, nil
	case kindOther, kindPlain:
		return true, nil
	}
	var st unix.Stat_t
	if err := sys.Fstat(f.bufferedFd, &st); err != nil {
		return false, nil // the method's own call reports it
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.kind.Store(kindOther)
		return true, nil
	}
	f.kind.Store(kindRegular)
	return false, nil
}

// notRegular reports what acquireOrPlain would say of f's kind, without asking
// the kernel: true once f is known not to be a regular file.
func (f *File) notRegular() bool {
	k := f.kind.Load()
	return k == kindPlain || k == kindOther
}

// What a File knows of its file's type (File.kind). A plain File is so
// from the start and for good; a page-cache File opened without an fstat
// starts unknown and learns, once (acquireOrPlain, File.list).
const (
	kindUnknown int32 = iota // not asked yet: a page-cache File's calls are a regular file's until then
	kindRegular              // a regular file
	kindOther                // found not to be a regular file after open: the methods os.File lacks, and Seek, take their plain way
	kindPlain                // not a regular file (or one opened as a stream, without offsets), as opened: every call is osf's
)

var errNotRegular = errors.New("not a regular file")

// nowaitPlain is Nowait for a nil File (os.ErrInvalid as the reason), a
// closed one (os.ErrClosed), and one known not to be a regular file,
// whose calls are os.File's.
func (f *File) nowaitPlain() (nowaitStatus, bool) {
	why := ""
	switch {
	case f == nil:
		why = os.ErrInvalid.Error()
	case f.life.closed():
		why = os.ErrClosed.Error()
	case f.notRegular():
		why = errNotRegular.Error() + ": os.File's calls"
	default:
		return nowaitStatus{}, false
	}
	return nowaitStatus{ReadsReason: why, WritesReason: why}, true
}

// plainReadBuffer is ReadBuffer on a plain file: ReadAt into new memory,
// as os.File would (a FIFO's ReadAt fails with ESPIPE).
func plainReadBuffer(p *os.File, off int64, n int) (*Buffer, error) {
	if off < 0 || n < 0 {
		return nil, negativeRange("read", p.Name())
	}
	buf := make([]byte, n)
	m, err := p.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return &Buffer{data: buf[:m]}, err
}

// plainControl runs fn on a plain file's descriptor under os.File's own
// reference (SyscallConn), so that a Close meanwhile cannot give the
// number away; fn's error is reported as os.File reports a system call's,
// a *fs.PathError with op.
func plainControl(p *os.File, op string, fn func(fd int) error) error {
	rc, err := p.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		// Closed meanwhile (poll's "use of closed file"): os.File's
		// own methods say os.ErrClosed.
		return &fs.PathError{Op: op, Path: p.Name(), Err: os.ErrClosed}
	}
	if ferr != nil {
		return &fs.PathError{Op: op, Path: p.Name(), Err: ferr}
	}
	return nil
}

// plainDatasync is fdatasync on a plain file's descriptor, reported as
// os.File.Sync reports fsync.
func plainDatasync(p *os.File) error {
	return plainControl(p, "sync", sys.Fdatasync)
}

// plainPreallocate is fallocate on a plain file's descriptor (block
// devices accept some modes; everything else refuses, with the kernel's
// errno).
func plainPreallocate(p *os.File, mode uint32, off, n int64) error {
	if off < 0 || n <= 0 || off > maxOffset-n {
		return &fs.PathError{Op: "preallocate", Path: p.Name(), Err: syscall.EINVAL}
	}
	return plainControl(p, "preallocate", func(fd int) error { return sys.Fallocate(fd, mode, off, n) })
}

// plainReadMany is ReadMany on a plain file: one plainReadBuffer a range.
func plainReadMany(p *os.File, ranges []Range) ([]*Buffer, error) {
	out := make([]*Buffer, len(ranges))
	for i, r := range ranges {
		if r.Off < 0 || r.Len < 0 {
			return nil, negativeRange("read", p.Name())
		}
		b, err := plainReadBuffer(p, r.Off, r.Len)
		if err != nil && err != io.EOF {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// plainWriteAtDSync is WriteAt then fdatasync on a plain file.
func plainWriteAtDSync(p *os.File, b []byte, off int64) (int, error) {
	n, err := p.WriteAt(b, off)
	if err != nil || len(b) == 0 {
		return n, err
	}
	return n, plainDatasync(p)
}
