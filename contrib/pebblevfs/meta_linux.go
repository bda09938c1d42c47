//go:build linux

package pebblevfs

import (
	"io/fs"
	"runtime"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// scheduler returns the scheduler the FS's files use, or nil if there is
// none (then the FS's removals and metadata syncs are vfs.Default's).
func (d *FS) scheduler() *sched.Scheduler {
	d.schedOnce.Do(func() {
		d.sched, _ = diskio.SchedulerOf(d.opts...)
	})
	return d.sched
}

// metaFile is a file the FS leaves to vfs.Default (MANIFEST, OPTIONS,
// markers, directories), with its syncs sent through the FS's scheduler:
// an fsync that waits for the disk then runs on one of io_uring's
// capped workers instead of holding a thread of the process (a blocked
// system call lets the Go runtime start another thread to run Go code).
// Everything else is vfs.Default's.
type metaFile struct {
	vfs.File
	s    *sched.Scheduler
	name string
	dir  bool
}

// meta wraps f, opened by vfs.Default, or returns it as is when the FS
// has no scheduler.
func (d *FS) meta(f vfs.File, name string, dir bool) vfs.File {
	s := d.scheduler()
	if s == nil || f == nil {
		return f
	}
	return &metaFile{File: f, s: s, name: name, dir: dir}
}

func (f *metaFile) Sync() error { return f.sync("sync", f.s.Fsync) }

// SyncData is fdatasync for a file, fsync for a directory (as
// vfs.Default's).
func (f *metaFile) SyncData() error {
	if f.dir {
		return f.Sync()
	}
	return f.sync("fdatasync", f.s.Fdatasync)
}

func (f *metaFile) sync(op string, call func(fd int) error) error {
	err := call(int(f.File.Fd()))
	runtime.KeepAlive(f.File)
	if err != nil {
		return &fs.PathError{Op: op, Path: f.name, Err: err}
	}
	return nil
}

// OpenDir opens the directory name, for syncing.
func (d *FS) OpenDir(name string) (vfs.File, error) {
	f, err := d.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return d.meta(f, name, true), nil
}

// remove is os.Remove through s: unlink, and if that fails, rmdir.
func remove(s *sched.Scheduler, name string) error {
	e := s.Unlinkat(unix.AT_FDCWD, name, 0)
	if e == nil {
		return nil
	}
	e1 := s.Unlinkat(unix.AT_FDCWD, name, unix.AT_REMOVEDIR)
	if e1 == nil {
		return nil
	}
	// As os.Remove decides: rmdir of a file says ENOTDIR, so any other
	// rmdir error is the one that matters.
	if e1 != unix.ENOTDIR {
		e = e1
	}
	return &fs.PathError{Op: "remove", Path: name, Err: e}
}
