//go:build linux

package diskio

import (
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// NewFile returns a File doing its I/O on the file osf has open, and takes
// osf over, as os.NewFile takes over a descriptor: from then on the File
// owns and closes it, and osf must not be used. The File starts at osf's
// offset, keeps its access mode and O_APPEND, and does its direct I/O
// through a second, O_DIRECT descriptor of its own where the filesystem
// allows (opts as for OpenFile). A regular file that osf's runtime poller
// holds (a FUSE file from os.OpenFile) moves to a duplicate of its
// descriptor, off the poller and blocking, sharing its offset, flags and
// locks: the File's Fd is then not osf's. To wrap a bare descriptor,
// NewFile(os.NewFile(fd, name)).
func NewFile(osf *os.File, opts ...Option) (*File, error) {
	if osf == nil {
		return nil, os.ErrInvalid
	}
	name := osf.Name()
	o, s, err := fileOptions(name, opts)
	if err != nil {
		return nil, err
	}
	osf, st, pf, err := plainFile(name, osf, s, o.direct != PageCache)
	if pf != nil || err != nil {
		return pf, err
	}
	fl, err := sys.Fcntl(int(osf.Fd()), unix.F_GETFL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	pos, err := osf.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	f, err := newFile(name, osf, s, fl, fl, pos, o.direct, st)
	return withOptions(f, err, o)
}

// OSFile returns a new *os.File on the same file, for code that needs one
// (a library taking *os.File, sendfile to a socket, mmap). It is the file
// opened again through /proc/self/fd, without O_DIRECT: its own
// descriptor, offset and flags, so any offset, length and buffer work on
// it, and closing it (or its finalizer) never touches this File's
// descriptor. Close it when done. It sees exactly what this File wrote,
// and this File sees what it writes, as with any other descriptor (see
// the package doc). For a FIFO, device or directory it is a dup of the
// descriptor, as os.File would share it.
func (f *File) OSFile() (*os.File, error) {
	plain, err := f.acquireOrPlain("open")
	if err != nil {
		return nil, err
	}
	defer f.release()
	if plain {
		var nfd int
		err := plainControl(f.osf, "dup", func(fd int) (err error) {
			nfd, err = sys.Fcntl(fd, unix.F_DUPFD_CLOEXEC, 0)
			return err
		})
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(nfd), f.name), nil
	}
	flag := f.access | unix.O_CLOEXEC
	if f.append {
		flag |= unix.O_APPEND
	}
	nfd, err := f.reopen(flag)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: f.name, Err: err}
	}
	return os.NewFile(uintptr(nfd), f.name), nil
}
