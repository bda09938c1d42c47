//go:build linux

package diskio_test

import (
	"io"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/benchfile"
	"github.com/diskio-go/diskio/sched"
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
			f, err := diskio.Open(path)
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
				r, err := f.NewStreamReader(0, diskio.StreamOptions{BufferSize: bufSize, ReadAhead: depth})
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
			f, err := diskio.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				evict()
				b.StartTimer()
				r, err := f.NewStreamReader(0, diskio.StreamOptions{BufferSize: bufSize, ReadAhead: depth})
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

// BenchmarkScanRefill scans the file with 4 KiB x 50 NextBuffer on a
// traced scheduler of its own and reports what a scan's speed depends on,
// in figures that hold up on a shared, noisy disk better than MB/s do.
// refill-µs is the median time from a read's completion (as the loop reaps
// it) to the next read of its slot reaching the kernel: the time the slot
// is out of the device's queue (fio refills on the thread that reaps).
// inflight is the reads in the kernel on average (the stream reads 16
// buffers at a time: 50 buffers are 3.1 reads); syscalls/read counts
// io_uring_enter and eventfd writes.
//
//	DISKIO_BENCH_SIZE=512M go test -run '^$' -bench ScanRefill -benchtime 1x -count 3 .
func BenchmarkScanRefill(b *testing.B) {
	const bufSize, depth = 4 << 10, 50
	path := benchfile.Shared(b, benchfile.Size())
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	size := st.Size()
	t := &refillTracer{reqs: make([]sched.RequestEvent, 0, size/bufSize+depth)}
	s, err := sched.New(sched.Options{Tracer: t})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	f, err := diskio.OpenFile(path, os.O_RDONLY, 0, diskio.WithScheduler(s))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(size)
	var refill []int64
	var busy, elapsed, reads, syscalls, window int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := bench.Evict(path); err != nil {
			b.Fatal(err)
		}
		t.reset()
		b.StartTimer()
		start := sched.Now()
		r, err := f.NewStreamReader(0, diskio.StreamOptions{BufferSize: bufSize, ReadAhead: depth})
		if err != nil {
			b.Fatal(err)
		}
		window = diskio.ExportStreamWindow(r) // a slot's next read is this far on
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
		r.Close()
		elapsed += sched.Now() - start
		if n != size {
			b.Fatalf("scanned %d of %d", n, size)
		}
		b.StopTimer()
		t.mu.Lock()
		byOff := make(map[int64]*sched.RequestEvent, len(t.reqs))
		for j := range t.reqs {
			byOff[t.reqs[j].Off] = &t.reqs[j]
		}
		for _, e := range t.reqs {
			busy += e.Complete - e.Submit
			if next := byOff[e.Off+window]; next != nil {
				refill = append(refill, next.Submit-e.Complete)
			}
		}
		reads += int64(len(t.reqs))
		syscalls += t.syscalls
		t.mu.Unlock()
		b.StartTimer()
	}
	if reads == 0 || len(refill) == 0 {
		b.Fatal("the tracer saw no reads")
	}
	slices.Sort(refill)
	b.ReportMetric(float64(refill[len(refill)/2])/1e3, "refill-µs")
	b.ReportMetric(float64(busy)/float64(elapsed), "inflight")
	b.ReportMetric(float64(syscalls)/float64(reads), "syscalls/read")
}

// refillTracer keeps the scheduler's read events and counts its system
// calls.
type refillTracer struct {
	mu       sync.Mutex
	reqs     []sched.RequestEvent
	syscalls int64
}

func (t *refillTracer) SyscallDone(ev sched.SyscallEvent) {
	if ev.Call != sched.SysURingEnter && ev.Call != sched.SysEventfdWrite {
		return
	}
	t.mu.Lock()
	t.syscalls++
	t.mu.Unlock()
}

func (t *refillTracer) RequestDone(ev sched.RequestEvent) {
	if ev.Op != sched.OpRead || ev.Inline {
		return
	}
	ev.Err = nil
	t.mu.Lock()
	t.reqs = append(t.reqs, ev)
	t.mu.Unlock()
}

func (t *refillTracer) reset() {
	t.mu.Lock()
	t.reqs, t.syscalls = t.reqs[:0], 0
	t.mu.Unlock()
}
