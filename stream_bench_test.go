//go:build linux

package diskio

import (
	"io"
	"os"
	"testing"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/benchfile"
)

// BenchmarkScan reads a whole cold file front to back: diskio's
// StreamReader with 512 KiB x 8 in flight, 4 KiB x 50 and 4 KiB one at a
// time, copying (Read) and not (NextBuffer: next-*), against
// os.File reading it buffered in 4 KiB calls. The file is evicted from the
// page cache before each scan. One op is one whole scan; use -benchtime 1x
// and DISKIO_BENCH_FILE or DISKIO_BENCH_SIZE (the case is 4 GiB):
//
//	DISKIO_BENCH_SIZE=4G go test -run '^$' -bench Scan -benchtime 1x .
func BenchmarkScan(b *testing.B) {
	path := benchfile.Shared(b, benchfile.Size())
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	size := st.Size() // DISKIO_BENCH_FILE may be larger
	evict := func() {
		if err := bench.Evict(path); err != nil {
			b.Fatal(err)
		}
	}
	stream := func(bufSize, depth int) func(b *testing.B) {
		return func(b *testing.B) {
			f, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 1<<20)
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				evict()
				b.StartTimer()
				r, err := f.NewStreamReader(0, StreamOptions{BufferSize: bufSize, ReadAhead: depth})
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.CopyBuffer(io.Discard, onlyReader{r}, buf); err != nil || n != size {
					b.Fatalf("scanned %d of %d: %v", n, size, err)
				}
				r.Close()
			}
		}
	}
	next := func(bufSize, depth int) func(b *testing.B) {
		return func(b *testing.B) {
			f, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				evict()
				b.StartTimer()
				r, err := f.NewStreamReader(0, StreamOptions{BufferSize: bufSize, ReadAhead: depth})
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				for {
					buf, err := r.NextBuffer()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n += int64(len(buf.Bytes()))
					buf.Release()
				}
				if n != size {
					b.Fatalf("scanned %d of %d", n, size)
				}
				r.Close()
			}
		}
	}
	b.Run("stream-512K-x8", stream(512<<10, 8))
	b.Run("stream-4K-x50", stream(4<<10, 50))
	b.Run("stream-4K-x1", stream(4<<10, 1))
	b.Run("next-4K-x50", next(4<<10, 50))
	b.Run("next-512K-x10", next(512<<10, 10))
	b.Run("os.File-buffered-4K", func(b *testing.B) {
		buf := make([]byte, 4096)
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			evict()
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			var n int64
			for {
				m, err := f.Read(buf)
				n += int64(m)
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
			if n != size {
				b.Fatalf("scanned %d of %d", n, size)
			}
		}
	})
}

// onlyReader hides other methods so io.CopyBuffer uses the given buffer.
type onlyReader struct{ io.Reader }
