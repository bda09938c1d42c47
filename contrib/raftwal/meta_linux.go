//go:build linux

package raftwal

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// syncDir makes dir's entries durable: fsync of the directory through the
// scheduler, which makes it on its caller's thread or an io_uring worker,
// at most as many at once as its worker cap.
func (v *VFS) syncDir(dir string) error {
	s := v.scheduler()
	if s == nil {
		return osSyncDir(dir)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = s.Fsync(int(d.Fd()))
	cerr := d.Close()
	if err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return cerr
}

// remove unlinks the file name through the scheduler.
func (v *VFS) remove(name string) error {
	s := v.scheduler()
	if s == nil {
		return os.Remove(name)
	}
	if err := s.Unlinkat(unix.AT_FDCWD, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}
