//go:build linux

package diskio_test

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/benchfile"
	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/sched"
)

// BenchmarkReadAt4K: aligned 4 KiB random reads through File against the
// same reads on the raw scheduler, side by side (the File's overhead:
// reference count, size check, alignment check).
//
//	go test -run '^$' -bench ReadAt4K -benchtime 200000x .
func BenchmarkReadAt4K(b *testing.B) {
	size := benchfile.Size()
	path := benchfile.Shared(b, size)
	s, err := sched.New(sched.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, g := range []int{1, 128} {
		b.Run(fmt.Sprintf("sched/g=%d", g), func(b *testing.B) {
			raw, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer raw.Close()
			fd := int(raw.Fd())
			benchRandomReads(b, g, size, func(p []byte, off int64) (int, error) { return s.ReadAt(fd, p, off) })
		})
		b.Run(fmt.Sprintf("File/g=%d", g), func(b *testing.B) {
			f, err := diskio.OpenFile(path, os.O_RDONLY, 0, diskio.WithScheduler(s), diskio.WithDirect(diskio.Direct))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if !f.Direct() {
				b.Fatal("not O_DIRECT")
			}
			benchRandomReads(b, g, size, f.ReadAt)
		})
	}
}

func benchRandomReads(b *testing.B, goroutines int, size int64, read func([]byte, int64) (int, error)) {
	const bs = 4096
	bufs, err := mem.Map(goroutines * bs)
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Unmap(bufs)
	blocks := uint64(size / bs)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.SetBytes(bs)
	b.ReportAllocs()
	b.ResetTimer()
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x := uint64(g)*0x9e3779b97f4a7c15 + 1
			p := bufs[g*bs : (g+1)*bs]
			for next.Add(1) <= int64(b.N) {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				if n, err := read(p, int64(x%blocks)*bs); n != bs {
					panic(fmt.Sprintf("read: %d, %v", n, err))
				}
			}
		}(g)
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IOPS")
}
