//go:build !linux

package raftwal

import "os"

// syncDir makes dir's entries durable (fsync of the directory).
func (v *VFS) syncDir(dir string) error { return osSyncDir(dir) }

// remove removes the file name.
func (v *VFS) remove(name string) error { return os.Remove(name) }
