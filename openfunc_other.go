//go:build !linux

package diskio

import (
	"errors"
	"io/fs"
	"os"
)

// openThrough is OpenFile with open doing what os.OpenFile does (os.Root's
// OpenFile, for a Root): open's errors are the caller's as they are.
func openThrough(open func(string, int, fs.FileMode) (*os.File, error), name string, flag int, perm fs.FileMode, opts []Option) (*File, error) {
	o := applyOptions(opts)
	if o.direct == DirectRequired {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.ErrUnsupported}
	}
	f, err := open(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &File{f: f, flag: flag}, nil
}
