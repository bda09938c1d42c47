//go:build linux

package diskio_test

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
)

// BenchmarkCopy: io.Copy of a file (1 GiB; DISKIO_COPY_MB sets it) from
// one File to another against os.File to os.File (copy_file_range), the
// source evicted from the page cache first. /sync ends with Sync of the
// destination, so both have put the copy on the disk; /nosync stops when
// io.Copy returns (os.File's copy then sits dirty in the page cache).
// Sub-benchmarks alternate with -count:
//
//	go test -run '^$' -bench 'Copy$' -benchtime 1x -count 2 .
func BenchmarkCopy(b *testing.B) {
	size := int64(1 << 30)
	if s := os.Getenv("DISKIO_COPY_MB"); s != "" {
		mb, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		size = int64(mb) << 20
	}
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	sf, err := os.Create(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := bench.Fill(sf, size, nil); err != nil {
		b.Fatal(err)
	}
	sf.Close()
	dst := filepath.Join(dir, "dst")
	for _, sync := range []bool{true, false} {
		name := "/nosync"
		if sync {
			name = "/sync"
		}
		b.Run("os"+name, func(b *testing.B) {
			b.SetBytes(size)
			for range b.N {
				b.StopTimer()
				evict(b, src, dst)
				in, err := os.Open(src)
				if err != nil {
					b.Fatal(err)
				}
				out, err := os.Create(dst)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				n, err := io.Copy(out, in)
				if err != nil || n != size {
					b.Fatal(n, err)
				}
				if sync {
					if err := out.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				in.Close()
				out.Close()
			}
		})
		b.Run("diskio"+name, func(b *testing.B) {
			b.SetBytes(size)
			for range b.N {
				b.StopTimer()
				evict(b, src, dst)
				in, err := diskio.OpenFile(src, os.O_RDONLY, 0, diskio.WithDirect(diskio.Direct))
				if err != nil {
					b.Fatal(err)
				}
				out, err := diskio.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666, diskio.WithDirect(diskio.Direct))
				if err != nil {
					b.Fatal(err)
				}
				if !in.Direct() || !out.Direct() {
					b.Fatal("not O_DIRECT")
				}
				b.StartTimer()
				n, err := io.Copy(out, in)
				if err != nil || n != size {
					b.Fatal(n, err)
				}
				if sync {
					if err := out.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				in.Close()
				out.Close()
			}
		})
	}
}

// evict drops src from the page cache and removes the last copy (after
// writing back what it left dirty, so that it does not slow the next).
func evict(b testing.TB, src, dst string) {
	if f, err := os.OpenFile(dst, os.O_RDWR, 0); err == nil {
		f.Sync()
		f.Close()
		os.Remove(dst)
	}
	if err := bench.Evict(src); err != nil {
		b.Fatal(err)
	}
}
