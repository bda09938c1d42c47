//go:build !linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// NewFile returns a File doing its I/O on the file osf has open, and takes
// osf over, as on Linux: from then on the File owns and closes it.
func NewFile(osf *os.File, opts ...Option) (*File, error) {
	if osf == nil {
		return nil, os.ErrInvalid
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.direct == DirectRequired {
		return nil, &fs.PathError{Op: "open", Path: osf.Name(), Err: errors.ErrUnsupported}
	}
	return &File{f: osf, flag: -1}, nil
}

// OSFile returns a new *os.File on the same file, opened again by name
// (this system has no /proc/self/fd), in the Root the File was opened in
// if it was (which must then still be open): closing it never touches
// this File's descriptor. Close it when done.
func (f *File) OSFile() (*os.File, error) {
	of := f.osFile()
	if of == nil {
		return nil, os.ErrInvalid
	}
	if _, err := of.Stat(); err != nil {
		return nil, err // closed
	}
	reopen := f.reopen
	if reopen == nil {
		reopen = func(flag int) (*os.File, error) { return os.OpenFile(of.Name(), flag, 0) }
	}
	flag := f.flag &^ (os.O_CREATE | os.O_EXCL | os.O_TRUNC)
	if f.flag < 0 {
		nf, err := reopen(os.O_RDWR)
		if err == nil {
			return nf, nil
		}
		flag = os.O_RDONLY
	}
	return reopen(flag)
}

// Alignment is 1: this system does no direct I/O.
func (f *File) Alignment() int { return 1 }

// ReadDir reads the directory's entries, like os.File.ReadDir.
func (f *File) ReadDir(n int) ([]fs.DirEntry, error) { return f.osFile().ReadDir(n) }

// Readdir reads the directory's entries as FileInfos, like os.File.Readdir.
func (f *File) Readdir(n int) ([]fs.FileInfo, error) { return f.osFile().Readdir(n) }

// Readdirnames reads the directory's entry names, like os.File.Readdirnames.
func (f *File) Readdirnames(n int) ([]string, error) { return f.osFile().Readdirnames(n) }

// Chmod changes the file's mode, like os.File.Chmod.
func (f *File) Chmod(mode fs.FileMode) error { return f.osFile().Chmod(mode) }

// Chown changes the file's owner and group, like os.File.Chown.
func (f *File) Chown(uid, gid int) error { return f.osFile().Chown(uid, gid) }

// Chdir makes the directory the working directory, like os.File.Chdir.
func (f *File) Chdir() error { return f.osFile().Chdir() }

// SyscallConn returns the raw file, like os.File.SyscallConn.
func (f *File) SyscallConn() (syscall.RawConn, error) { return f.osFile().SyscallConn() }

// SetDeadline sets the read and write deadlines, like os.File.SetDeadline.
func (f *File) SetDeadline(t time.Time) error { return f.osFile().SetDeadline(t) }

// SetReadDeadline sets the read deadline, like os.File.SetReadDeadline.
func (f *File) SetReadDeadline(t time.Time) error { return f.osFile().SetReadDeadline(t) }

// SetWriteDeadline sets the write deadline, like os.File.SetWriteDeadline.
func (f *File) SetWriteDeadline(t time.Time) error { return f.osFile().SetWriteDeadline(t) }

// ReadFrom copies r into the file at its offset, like os.File.ReadFrom
// (whose fast paths apply when r is a File or an *os.File).
func (f *File) ReadFrom(r io.Reader) (int64, error) {
	if src, ok := r.(*File); ok && src != nil {
		r = src.f
	}
	return f.osFile().ReadFrom(r)
}

// WriteTo copies the file from its offset into w, like os.File.WriteTo.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	if dst, ok := w.(*File); ok && dst != nil {
		w = dst.f
	}
	return f.osFile().WriteTo(w)
}

// DroppedBuffers counts Buffers dropped without Release. On this system a
// Buffer is ordinary Go memory, so it is always 0.
func DroppedBuffers() int64 { return 0 }
