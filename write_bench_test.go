//go:build linux

package diskio_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
)

// BenchmarkSmallWrites: one writer appending records of 100 B, 1 KiB and
// 10 KiB with Write and no flush (a log between its syncs, an encoder
// writing a file), on a new file, on a recycled one (written, synced
// and dropped from the page cache before) and on a new file opened
// O_APPEND (the kernel's appends), through a File and through
// os.File, with a Datasync at the end. Unaligned records take the File's
// page-cache edge path; the 10 KiB ones also write whole pages directly.
// The metric is MB/s, the end's Datasync included.
//
//	go test -run '^$' -bench SmallWrites -benchtime 20000x -count 2 .
func BenchmarkSmallWrites(b *testing.B) {
	for _, kind := range []string{"new", "recycled", "append"} {
		for _, size := range []int{100, 1024, 10 << 10} {
			for _, be := range []string{"diskio", "os.File"} {
				b.Run(fmt.Sprintf("%s/%d/%s", kind, size, be), func(b *testing.B) {
					name := filepath.Join(benchDir(b), "log")
					os.Remove(name)
					if kind == "recycled" {
						o, err := os.Create(name)
						if err == nil {
							_, err = o.Write(make([]byte, int64(b.N)*int64(size)+4096))
						}
						if err == nil {
							err = unix.Fdatasync(int(o.Fd()))
						}
						if err == nil {
							err = unix.Fadvise(int(o.Fd()), 0, 0, unix.FADV_DONTNEED)
						}
						if err == nil {
							err = o.Close()
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					type file interface {
						Write([]byte) (int, error)
						Close() error
					}
					var f file
					var flush func() error
					flag := os.O_WRONLY | os.O_CREATE
					if kind == "append" {
						flag |= os.O_APPEND
					}
					if be == "os.File" {
						o, err := os.OpenFile(name, flag, 0o644)
						if err != nil {
							b.Fatal(err)
						}
						f, flush = o, func() error { return unix.Fdatasync(int(o.Fd())) }
					} else {
						d, err := diskio.OpenFile(name, flag, 0o644)
						if err != nil {
							b.Fatal(err)
						}
						f, flush = d, d.Datasync
					}
					rec := make([]byte, size)
					b.SetBytes(int64(size))
					b.ResetTimer()
					for range b.N {
						if _, err := f.Write(rec); err != nil {
							b.Fatal(err)
						}
					}
					if err := flush(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if err := f.Close(); err != nil {
						b.Fatal(err)
					}
				})
			}
		}
	}
}
