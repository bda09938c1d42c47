//go:build linux

package bench

import (
	"math/rand/v2"
	"os"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// The data file of read benchmarks: real bytes, never a fallocated file,
// and cold in the page cache.

// Fill writes size bytes of pseudo-random data to f (never zeros or a
// fallocated file, whose unwritten extents read back without touching the
// disk), syncs it and drops it from the page cache, so that later reads,
// buffered ones too, start cold. progress, if set, is told every 64 MiB.
func Fill(f *os.File, size int64, progress func(done, total int64)) error {
	rng := rand.NewChaCha8([32]byte{'d', 'i', 's', 'k', 'i', 'o'})
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), size-off)]
		rng.Read(b)
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		if progress != nil && off%(64<<20) == 0 {
			progress(off, size)
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return sys.Fadvise(int(f.Fd()), 0, size, unix.FADV_DONTNEED)
}

// Evict writes back and drops the file's pages from the page cache
// (posix_fadvise DONTNEED drops only clean pages), so that the next
// buffered read of it starts cold.
func Evict(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if f, err = os.Open(path); err != nil {
			return err
		}
	}
	defer f.Close()
	fd := int(f.Fd())
	sys.Fdatasync(fd) // a read-only descriptor may refuse; the pages are clean then
	return sys.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
}

// Warm reads [0, n) of the file through the page cache, so that the next
// buffered read of that range is a hit.
func Warm(path string, n int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for off := int64(0); off < n; off += int64(len(buf)) {
		if _, err := f.ReadAt(buf[:min(int64(len(buf)), n-off)], off); err != nil {
			return err
		}
	}
	return nil
}
