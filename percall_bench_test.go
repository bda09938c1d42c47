//go:build linux

package diskio_test

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/diskio-go/diskio"
)

// BenchmarkPerCall measures what one call costs on a warm page cache, for
// os.File and for a File with the default options, side by side: the
// calls a program that changed its import makes most (benchstat the
// os and diskio rows).
func BenchmarkPerCall(b *testing.B) {
	type file interface {
		io.ReadWriteSeeker
		io.ReaderAt
		io.WriterAt
		Close() error
	}
	sides := []struct {
		name string
		open func(name string, flag int) (file, error)
	}{
		{"os", func(n string, fl int) (file, error) { return os.OpenFile(n, fl, 0o644) }},
		{"diskio", func(n string, fl int) (file, error) { return diskio.OpenFile(n, fl, 0o644) }},
	}
	data := make([]byte, 10<<10)
	for i := range data {
		data[i] = byte(i)
	}
	// Small files: open, read all, close; create, write 10 KiB, close.
	const nfiles = 64
	dirs := make([]string, len(sides))
	for k := range sides {
		dirs[k] = b.TempDir()
		for i := range nfiles {
			if err := os.WriteFile(filepath.Join(dirs[k], "s"+strconv.Itoa(i)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Each operation on both sides in turn, so that neither side runs
	// in the other's writeback.
	each := func(name string, fn func(b *testing.B, open func(string, int) (file, error), dir string)) {
		for k, side := range sides {
			b.Run(name+"/"+side.name, func(b *testing.B) { fn(b, side.open, dirs[k]) })
		}
	}
	each("open-read-close", func(b *testing.B, open func(string, int) (file, error), dir string) {
		buf := make([]byte, 16<<10)
		for i := 0; b.Loop(); i++ {
			f, err := open(filepath.Join(dir, "s"+strconv.Itoa(i%nfiles)), os.O_RDONLY)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				m, err := f.Read(buf[n:])
				n += m
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if n != len(data) {
				b.Fatalf("read %d", n)
			}
			f.Close()
		}
	})
	each("create-write-close", func(b *testing.B, open func(string, int) (file, error), dir string) {
		for i := 0; b.Loop(); i++ {
			f, err := open(filepath.Join(dir, "c"+strconv.Itoa(i%nfiles)), os.O_RDWR|os.O_CREATE|os.O_TRUNC)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(data); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	for _, size := range []int{100, 1000} {
		each("write-"+strconv.Itoa(size), func(b *testing.B, open func(string, int) (file, error), dir string) {
			f, err := open(filepath.Join(dir, "w"), os.O_RDWR|os.O_CREATE|os.O_TRUNC)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			p := data[:size]
			for i := 0; b.Loop(); i++ {
				if i%(64<<20/size) == 0 {
					f.Seek(0, io.SeekStart)
				}
				if _, err := f.Write(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	each("overwrite-4k", func(b *testing.B, open func(string, int) (file, error), dir string) {
		f, err := open(filepath.Join(dir, "o"), os.O_RDWR|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		const blocks = 4096
		for i := range blocks {
			f.WriteAt(data[:4096], int64(i)*4096)
		}
		for i := 0; b.Loop(); i++ {
			if _, err := f.WriteAt(data[:4096], int64(i*7919%blocks)*4096); err != nil {
				b.Fatal(err)
			}
		}
	})
	each("readat-4k", func(b *testing.B, open func(string, int) (file, error), dir string) {
		f, err := open(filepath.Join(dir, "o"), os.O_RDONLY)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		p := make([]byte, 4096)
		for i := 0; b.Loop(); i++ {
			if _, err := f.ReadAt(p, int64(i*7919%4096)*4096); err != nil {
				b.Fatal(err)
			}
		}
	})
	each("seek-end", func(b *testing.B, open func(string, int) (file, error), dir string) {
		f, err := open(filepath.Join(dir, "o"), os.O_RDONLY)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		for b.Loop() {
			if _, err := f.Seek(0, io.SeekEnd); err != nil {
				b.Fatal(err)
			}
		}
	})
}
