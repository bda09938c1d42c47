//go:build !linux

package diskio

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"syscall"
)

// Sync commits the file's contents and metadata to stable storage, like
// os.File.Sync. (On Linux, concurrent calls share flushes and a failed
// flush is sticky; here each call is the operating system's.)
func (f *File) Sync() error { return f.osFile().Sync() }

// Datasync commits the file's contents to stable storage. On this system
// it is Sync (there is no portable fdatasync).
func (f *File) Datasync() error { return f.osFile().Sync() }

// WriteAtDSync is WriteAt followed by Sync: the data is durable when it
// returns. (On Linux it is one write with RWF_DSYNC.)
func (f *File) WriteAtDSync(b []byte, off int64) (int, error) {
	n, err := f.osFile().WriteAt(b, off)
	if err != nil || len(b) == 0 {
		return n, err
	}
	return n, f.osFile().Sync()
}

// Preallocate makes sure bytes [off, off+n) of the file exist. On Linux it
// reserves the disk space (fallocate); on this system it only extends the
// file with Truncate when off+n is past its size, which reads as zeros and
// may be sparse, so a later write can still fail for lack of space. It
// never shrinks the file. off must be >= 0 and n > 0.
func (f *File) Preallocate(off, n int64) error {
	of := f.osFile()
	if of == nil {
		return os.ErrInvalid
	}
	if off < 0 || n <= 0 || off > maxInt64-n {
		return &fs.PathError{Op: "preallocate", Path: of.Name(), Err: syscall.EINVAL}
	}
	fi, err := of.Stat()
	if err != nil {
		return err
	}
	if end := off + n; end > fi.Size() {
		return of.Truncate(end)
	}
	return nil
}

// PreallocateKeepSize reserves space without changing the size on Linux
// (FALLOC_FL_KEEP_SIZE). This system has no portable way to: it checks
// its arguments and the file, and reserves nothing.
func (f *File) PreallocateKeepSize(off, n int64) error {
	of := f.osFile()
	if of == nil {
		return os.ErrInvalid
	}
	if off < 0 || n <= 0 || off > maxInt64-n {
		return &fs.PathError{Op: "preallocate", Path: of.Name(), Err: syscall.EINVAL}
	}
	_, err := of.Stat()
	return err
}

const maxInt64 = 1<<63 - 1

// SyncDir makes the entries of directory dir durable (fsync of the
// directory), after creating, renaming or removing a file in it. On
// Windows, where directories cannot be flushed and NTFS journals names
// itself, it only checks that dir is a directory.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	fi, err := d.Stat()
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "sync", Path: dir, Err: errors.New("not a directory")}
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	return d.Sync()
}
