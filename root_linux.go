//go:build linux

package diskio

import "io/fs"

func (r *Root) openFile(name string, flag int, perm fs.FileMode) (*File, error) {
	return openThrough(r.root.OpenFile, name, flag, perm, r.opts)
}
