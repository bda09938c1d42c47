//go:build !linux

package diskio

import (
	"io/fs"
	"os"
)

// File is an open file. On systems other than Linux it is a thin wrapper
// of *os.File: I/O is buffered, goes straight to the operating system and
// Direct always reports false.
//
// Like *os.File, a File is safe for concurrent use by several goroutines
// as far as ReadAt and WriteAt go; Read, Write and Seek share the file
// offset.
type File struct {
	f    *os.File
	flag int // OpenFile's flags, for OSFile; -1 from NewFile

	// reopen opens the file again for OSFile: in the Root that opened
	// it (root_other.go), or by name when nil.
	reopen func(flag int) (*os.File, error)
}

// Open opens the named file for reading, like os.Open.
func Open(name string) (*File, error) {
	return OpenFile(name, os.O_RDONLY, 0)
}

// Create creates or truncates the named file, like os.Create: mode 0o666
// (before umask), opened for reading and writing.
func Create(name string) (*File, error) {
	return OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens the named file with the given flags (os.O_RDONLY etc.)
// and, when it creates the file, permissions perm, like os.OpenFile.
//
// Direct I/O is not available on this system: WithDirect(DirectRequired)
// makes OpenFile fail with a *fs.PathError wrapping errors.ErrUnsupported;
// PageCache and Direct open the file buffered.
func OpenFile(name string, flag int, perm fs.FileMode, opts ...Option) (*File, error) {
	return openThrough(os.OpenFile, name, flag, perm, opts)
}

// osFile returns the wrapped *os.File, or nil for a nil File: the methods
// of a nil *os.File return os.ErrInvalid, which the methods below pass on.
func (f *File) osFile() *os.File {
	if f == nil {
		return nil
	}
	return f.f
}

// Name returns the name of the file as given to OpenFile.
func (f *File) Name() string { return f.f.Name() }

// Read reads up to len(p) bytes at the file offset and advances it, like
// os.File.Read; at end of file it returns 0, io.EOF.
func (f *File) Read(p []byte) (int, error) { return f.osFile().Read(p) }

// ReadAt reads len(p) bytes at offset off, like os.File.ReadAt: when it
// reads fewer it returns an error (io.EOF at end of file). It does not use
// or change the file offset.
func (f *File) ReadAt(p []byte, off int64) (int, error) { return f.osFile().ReadAt(p, off) }

// Write writes p at the file offset (at end of file with os.O_APPEND) and
// advances it, like os.File.Write.
func (f *File) Write(p []byte) (int, error) { return f.osFile().Write(p) }

// WriteAt writes p at offset off, like os.File.WriteAt. It does not use or
// change the file offset; it fails on a file opened with os.O_APPEND.
func (f *File) WriteAt(p []byte, off int64) (int, error) { return f.osFile().WriteAt(p, off) }

// WriteString is Write of the bytes of s.
func (f *File) WriteString(s string) (int, error) { return f.osFile().WriteString(s) }

// Seek sets the file offset for the next Read or Write, like os.File.Seek
// (whence is io.SeekStart, io.SeekCurrent or io.SeekEnd).
func (f *File) Seek(offset int64, whence int) (int64, error) {
	return f.osFile().Seek(offset, whence)
}

// Stat returns the file's fs.FileInfo, like os.File.Stat.
func (f *File) Stat() (fs.FileInfo, error) { return f.osFile().Stat() }

// Truncate changes the size of the file, like os.File.Truncate.
func (f *File) Truncate(size int64) error { return f.osFile().Truncate(size) }

// Close closes the file, like os.File.Close; a second Close returns an
// error.
func (f *File) Close() error { return f.osFile().Close() }

// Fd returns the file's descriptor (a handle on Windows), like os.File.Fd.
// It stays valid until Close.
func (f *File) Fd() uintptr { return f.osFile().Fd() }

// Direct reports whether the file uses direct (unbuffered) I/O: never on
// this system.
func (f *File) Direct() bool { return false }
