//go:build linux

package diskio

import (
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/sched"
)

// NewFile returns a File doing its I/O on the file osf has open, and takes
// osf over, as os.NewFile takes over a descriptor: from then on the File
// owns and closes it, and osf must not be used. The File starts at osf's
// offset, keeps its access mode and O_APPEND, and switches the open file
// to O_DIRECT where the filesystem allows (opts as for OpenFile). To wrap
// a bare descriptor, NewFile(os.NewFile(fd, name)).
func NewFile(osf *os.File, opts ...Option) (*File, error) {
	if osf == nil {
		return nil, os.ErrInvalid
	}
	name := osf.Name()
	if pf, err := plainFile(name, osf); pf != nil || err != nil {
		return pf, err
	}
	fl, err := unix.FcntlInt(osf.Fd(), unix.F_GETFL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	pos, err := osf.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	s := o.sched
	if s == nil {
		if s, err = sched.Default(); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	f := &File{
		name:    name,
		osf:     osf,
		fd:      int(osf.Fd()),
		s:       s,
		acc:     fl & unix.O_ACCMODE,
		append:  fl&unix.O_APPEND != 0,
		pos:     pos,
		drained: make(chan struct{}),
	}
	if err := f.setup(o.direct); err != nil {
		if f.fd != int(osf.Fd()) {
			unix.Close(f.fd)
		}
		osf.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	runtime.SetFinalizer(f, (*File).Close)
	return f, nil
}

// OSFile returns a new *os.File on the same file, for code that needs one
// (a library taking *os.File, sendfile to a socket, mmap). It is the file
// opened again through /proc/self/fd, without O_DIRECT: its own
// descriptor, offset and flags, so any offset, length and buffer work on
// it, and closing it (or its finalizer) never touches this File's
// descriptor. Close it when done. It sees what this File wrote, but not
// this File's size tracking: an unaligned write that grew the file leaves
// zeros past the logical size until Sync or Close of this File (see the
// package doc), and what it writes past this File's size is seen here only
// once this File next asks the kernel (Stat, Seek to the end). For a
// FIFO, device or directory it is a dup of the descriptor, as os.File
// would share it.
func (f *File) OSFile() (*os.File, error) {
	if p, ok := f.plainPath(); ok {
		if p == nil {
			return nil, os.ErrInvalid
		}
		rc, err := p.SyscallConn()
		if err != nil {
			return nil, err
		}
		var nfd int
		var derr error
		if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
			return nil, &fs.PathError{Op: "dup", Path: p.Name(), Err: err}
		}
		if derr != nil {
			return nil, &fs.PathError{Op: "dup", Path: p.Name(), Err: derr}
		}
		return os.NewFile(uintptr(nfd), p.Name()), nil
	}
	if err := f.acquire("open"); err != nil {
		return nil, err
	}
	defer f.release()
	flag := f.acc | unix.O_CLOEXEC
	if f.append {
		flag |= unix.O_APPEND
	}
	nfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(f.fd), flag, 0)
	for err == unix.EINTR {
		nfd, err = unix.Open("/proc/self/fd/"+strconv.Itoa(f.fd), flag, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: f.name, Err: err}
	}
	return os.NewFile(uintptr(nfd), f.name), nil
}
