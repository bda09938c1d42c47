//go:build linux

package diskio

import (
	"github.com/diskio-go/diskio/internal/sys"
)

// Prefetch starts reading [off, off+n) into the page cache and returns
// without waiting for the disk, so a later read of the range is a
// page-cache hit. It is readahead(2), which the kernel implements as
// posix_fadvise(POSIX_FADV_WILLNEED) (Pebble's vfs.File.Prefetch is this
// call). On an O_DIRECT file it does nothing: its reads bypass the page
// cache, and a StreamReader is the way to read ahead.
func (f *File) Prefetch(off, n int64) error {
	plain, err := f.acquireOrPlain("prefetch")
	if err != nil {
		return err
	}
	defer f.release()
	if off < 0 || n < 0 {
		return negativeRange("prefetch", f.name)
	}
	if f.direct != nil || n == 0 {
		return nil
	}
	if plain {
		return plainControl(f.osf, "prefetch", func(fd int) error { return fadvise(fd, off, n, AdviceWillNeed) })
	}
	return f.pathErr("prefetch", fadvise(f.dataFd, off, n, AdviceWillNeed))
}

// Advise passes posix_fadvise(2) through: advice about how [off, off+n)
// will be used (n == 0: to the end of the file). AdviceSequential and
// AdviceRandom change the kernel's read-ahead for buffered files;
// AdviceDontNeed drops clean cached pages. On an O_DIRECT file the page
// cache is not used, so the advice changes nothing but is still checked
// and passed on.
func (f *File) Advise(off, n int64, advice Advice) error {
	plain, err := f.acquireOrPlain("fadvise")
	if err != nil {
		return err
	}
	defer f.release()
	if plain {
		return plainControl(f.osf, "fadvise", func(fd int) error { return fadvise(fd, off, n, advice) })
	}
	return f.pathErr("fadvise", fadvise(f.dataFd, off, n, advice))
}

func fadvise(fd int, off, n int64, advice Advice) error {
	return sys.Fadvise(fd, off, n, int(advice))
}
