//go:build !linux

package diskio

import (
	"io/fs"
	"os"
)

// openFile opens name in the root; the File's OSFile opens it again
// there, never by its name outside the root.
func (r *Root) openFile(name string, flag int, perm fs.FileMode) (*File, error) {
	f, err := openThrough(r.root.OpenFile, name, flag, perm, r.opts)
	if err != nil {
		return nil, err
	}
	root := r.root
	f.reopen = func(flag int) (*os.File, error) { return root.OpenFile(name, flag, 0) }
	return f, nil
}
