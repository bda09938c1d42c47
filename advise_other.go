//go:build !linux

package diskio

import (
	"os"
)

// Prefetch asks for [off, off+n) to be read into the page cache; on this
// system it only checks its arguments (there is no readahead(2)).
func (f *File) Prefetch(off, n int64) error {
	if f == nil {
		return os.ErrInvalid
	}
	if off < 0 || n < 0 {
		return negativeRange("prefetch", f.Name())
	}
	return nil
}

// Advise is posix_fadvise(2) on Linux; on this system advice is ignored.
func (f *File) Advise(off, n int64, advice Advice) error {
	if f == nil {
		return os.ErrInvalid
	}
	return nil
}
