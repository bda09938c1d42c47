//go:build linux

package diskio

import (
	"io/fs"
	"os"
	"syscall"
	"time"
)

// The metadata methods of os.File. A File keeps the *os.File it opened
// (without O_DIRECT only when opened write-only; see setup), and these go
// to it, while the File is open, with os.File's errors.

// viaOS runs fn on the File's *os.File: at once for a plain or nil File
// (nil gives os.File's os.ErrInvalid), or counted in like any call, so
// that after Close it fails with os.ErrClosed under op.
func (f *File) viaOS(op string, fn func(*os.File) error) error {
	if p, ok := f.plainPath(); ok {
		return fn(p)
	}
	if err := f.acquire(op); err != nil {
		return err
	}
	defer f.release()
	return fn(f.osf)
}

// Chmod changes the file's mode, like os.File.Chmod.
func (f *File) Chmod(mode fs.FileMode) error {
	return f.viaOS("chmod", func(p *os.File) error { return p.Chmod(mode) })
}

// Chown changes the file's owner and group, like os.File.Chown.
func (f *File) Chown(uid, gid int) error {
	return f.viaOS("chown", func(p *os.File) error { return p.Chown(uid, gid) })
}

// Chdir makes the file, which must be a directory, the working directory,
// like os.File.Chdir.
func (f *File) Chdir() error {
	return f.viaOS("chdir", func(p *os.File) error { return p.Chdir() })
}

// SyscallConn returns the raw file, like os.File.SyscallConn. Its
// descriptor is Fd's when the file was opened for reading: O_DIRECT, with
// aligned offsets, lengths and memory; bypassing the File bypasses its
// size tracking too.
func (f *File) SyscallConn() (syscall.RawConn, error) {
	var rc syscall.RawConn
	err := f.viaOS("SyscallConn", func(p *os.File) (err error) {
		rc, err = p.SyscallConn()
		return err
	})
	return rc, err
}

// SetDeadline sets the read and write deadlines, like os.File.SetDeadline:
// a regular file has none (os.ErrNoDeadline); a FIFO or pipe does.
func (f *File) SetDeadline(t time.Time) error {
	return f.viaOS("SetDeadline", func(p *os.File) error { return p.SetDeadline(t) })
}

// SetReadDeadline sets the read deadline, like os.File.SetReadDeadline.
func (f *File) SetReadDeadline(t time.Time) error {
	return f.viaOS("SetReadDeadline", func(p *os.File) error { return p.SetReadDeadline(t) })
}

// SetWriteDeadline sets the write deadline, like os.File.SetWriteDeadline.
func (f *File) SetWriteDeadline(t time.Time) error {
	return f.viaOS("SetWriteDeadline", func(p *os.File) error { return p.SetWriteDeadline(t) })
}
