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

// viaOS runs fn on the File's *os.File (nil for a nil File, whose methods
// return os.ErrInvalid). Close closes that *os.File, so after Close fn
// fails exactly as os.File's method would on a closed file.
func (f *File) viaOS(op string, fn func(*os.File) error) error {
	if f == nil {
		return fn(nil)
	}
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

// SyscallConn returns the raw file, like os.File.SyscallConn: its
// descriptor is Fd's, the one OpenFile opened, without O_DIRECT. I/O made
// through it bypasses the File's scheduler and size hints; the File sees
// its writes as it sees another descriptor's.
func (f *File) SyscallConn() (syscall.RawConn, error) {
	if f == nil {
		return (*os.File)(nil).SyscallConn()
	}
	return f.osf.SyscallConn()
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
