//go:build !linux

package sqlitevfs

import "github.com/ncruces/go-sqlite3/vfs"

// VFS is, on systems other than Linux (where diskio is a thin wrapper of
// *os.File), SQLite's default VFS under another name.
type VFS struct {
	vfs.VFSFilename
}

// New returns the default VFS: diskio has nothing to add here.
func New(opts Options) *VFS { return &VFS{vfs.Find("").(vfs.VFSFilename)} }
