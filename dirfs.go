package diskio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// DirFS returns a file system (an fs.FS) for the tree of files rooted at
// the directory dir, like os.DirFS, whose regular files are read through
// diskio: Open returns, for a regular file, an fs.File backed by a File
// (which also implements io.ReaderAt and io.Seeker), and ReadFile reads
// through a File. Directories, and files that are neither regular nor
// directories (devices, pipes, sockets), are opened with os.Open, to which
// direct I/O does not apply; a directory implements fs.ReadDirFile.
//
// The file system also implements fs.StatFS, fs.ReadFileFS, fs.ReadDirFS
// and fs.ReadLinkFS. It is read-only: files are opened with os.O_RDONLY.
//
// Names are slash-separated paths as fs.ValidPath accepts them; anything
// else, such as "../x" or "/abs", fails with a *fs.PathError wrapping
// fs.ErrInvalid. As with os.DirFS, this keeps names from leaving dir
// lexically, but a symbolic link inside dir may still point outside it
// (use os.Root to prevent that), and DirFS("") fails on every name.
func DirFS(dir string) fs.FS {
	return dirFS(dir)
}

type dirFS string

var (
	_ fs.FS         = dirFS("")
	_ fs.StatFS     = dirFS("")
	_ fs.ReadFileFS = dirFS("")
	_ fs.ReadDirFS  = dirFS("")
	_ fs.ReadLinkFS = dirFS("")
)

// join returns the operating-system path of name in dir, or fs.ErrInvalid
// when name is not a valid fs path or cannot be a local path here (on
// Windows, for example, a reserved name or one with a backslash).
func (dir dirFS) join(name string) (string, error) {
	if dir == "" {
		return "", errors.New("diskio: DirFS with empty root")
	}
	if !fs.ValidPath(name) {
		return "", fs.ErrInvalid
	}
	local, err := filepath.Localize(name)
	if err != nil {
		return "", fs.ErrInvalid
	}
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return string(dir) + local, nil
	}
	return string(dir) + string(os.PathSeparator) + local, nil
}

// withName reports err with the fs name instead of the operating-system
// path that join made of it, as os.DirFS does.
func withName(err error, name string) error {
	if pe, ok := err.(*fs.PathError); ok {
		pe.Path = name
	}
	return err
}

// Open opens the named file for reading. A regular file is read through a
// File; anything else is an *os.File.
func (dir dirFS) Open(name string) (fs.File, error) {
	full, err := dir.join(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	fi, err := os.Stat(full)
	if err != nil {
		return nil, withName(err, name)
	}
	if !fi.Mode().IsRegular() {
		f, err := os.Open(full)
		if err != nil {
			return nil, withName(err, name)
		}
		return f, nil
	}
	f, err := Open(full)
	if err != nil {
		return nil, withName(err, name)
	}
	return &dirFile{f: f}, nil
}

// ReadFile reads the whole named file. A regular file is read through a
// File into a buffer sized by its Stat, until io.EOF; anything else is
// read with os.ReadFile.
func (dir dirFS) ReadFile(name string) ([]byte, error) {
	full, err := dir.join(name)
	if err != nil {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: err}
	}
	fi, err := os.Stat(full)
	if err != nil {
		return nil, withName(err, name)
	}
	if !fi.Mode().IsRegular() {
		b, err := os.ReadFile(full)
		if err != nil {
			return nil, withName(err, name)
		}
		return b, nil
	}
	f, err := Open(full)
	if err != nil {
		return nil, withName(err, name)
	}
	defer f.Close()
	b, err := readAll(f)
	if err != nil {
		return nil, withName(err, name)
	}
	return b, nil
}

// readAll reads f from its offset to io.EOF, allocating once for a file
// whose size does not change, as os.ReadFile does.
func readAll(f *File) ([]byte, error) {
	var size int
	if fi, err := f.Stat(); err == nil {
		if s := fi.Size(); s > 0 && int64(int(s)) == s {
			size = int(s)
		}
	}
	if size < maxInt-1 {
		size++ // room for the read that sees io.EOF
	}
	if size < 512 {
		size = 512
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return data, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // grow
		}
	}
}

const maxInt = int(^uint(0) >> 1)

// Stat returns the fs.FileInfo of the named file, following symbolic
// links, like os.Stat.
func (dir dirFS) Stat(name string) (fs.FileInfo, error) {
	full, err := dir.join(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	fi, err := os.Stat(full)
	if err != nil {
		return nil, withName(err, name)
	}
	return fi, nil
}

// Lstat returns the fs.FileInfo of the named file without following a
// final symbolic link, like os.Lstat.
func (dir dirFS) Lstat(name string) (fs.FileInfo, error) {
	full, err := dir.join(name)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	fi, err := os.Lstat(full)
	if err != nil {
		return nil, withName(err, name)
	}
	return fi, nil
}

// ReadLink returns the destination of the named symbolic link, as stored
// (it may be absolute, or lead outside the file system).
func (dir dirFS) ReadLink(name string) (string, error) {
	full, err := dir.join(name)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	s, err := os.Readlink(full)
	if err != nil {
		return "", withName(err, name)
	}
	return s, nil
}

// ReadDir reads the named directory and returns its entries sorted by
// name, like os.ReadDir.
func (dir dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	full, err := dir.join(name)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return nil, withName(err, name)
	}
	return entries, nil
}

// dirFile is a regular file of a DirFS: a read-only view of a File, so
// that it is an fs.File (and an io.ReaderAt and io.Seeker) without the
// File's write methods.
type dirFile struct {
	f *File
}

var (
	_ fs.File     = (*dirFile)(nil)
	_ io.ReaderAt = (*dirFile)(nil)
	_ io.Seeker   = (*dirFile)(nil)
)

func (d *dirFile) Read(p []byte) (int, error) { return d.f.Read(p) }

func (d *dirFile) ReadAt(p []byte, off int64) (int, error) { return d.f.ReadAt(p, off) }

func (d *dirFile) Seek(offset int64, whence int) (int64, error) { return d.f.Seek(offset, whence) }

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.f.Stat() }

func (d *dirFile) Close() error { return d.f.Close() }
