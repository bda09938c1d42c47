//go:build linux

package diskio

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openThrough is OpenFile with open doing what os.OpenFile does (os.Root's
// OpenFile, for a Root): open's errors are the caller's as they are, and
// the File is named as open named its *os.File. A direct File's second
// descriptor is the same file reopened through /proc/self/fd, which
// resolves no name: it cannot reach another file than open did.
func openThrough(open func(string, int, fs.FileMode) (*os.File, error), name string, flag int, perm fs.FileMode, opts []Option) (*File, error) {
	o, s, err := fileOptions(name, opts)
	if err != nil {
		return nil, err
	}
	flag &^= unix.O_DIRECT // ours to decide
	osf, err := open(name, flag, perm)
	if err != nil {
		return nil, err
	}
	name = osf.Name()
	osf, st, pf, err := plainFile(name, osf, s, o.direct != PageCache)
	if pf != nil || err != nil {
		return pf, err // a FIFO, device or directory: os.File's way
	}
	f, err := newFileAt(true, name, osf, s, flag, flag, 0, o.direct, st)
	return withOptions(f, err, o)
}
