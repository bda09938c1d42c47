//go:build linux

package uring

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/benchfile"
	"github.com/diskio-go/diskio/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	benchfile.Remove()
	os.Exit(code)
}

// BenchmarkNopRoundTrip is the cost of one io_uring_enter that submits a
// batch of NOPs and waits for all of them, plus reaping them: the fixed
// cost the scheduler pays per wake-up, and how batching amortises it.
func BenchmarkNopRoundTrip(b *testing.B) {
	for _, batch := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			r := newRing(b, 64, nil)
			cqes := make([]CQE, batch)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := 0; j < batch; j++ {
					r.GetSQE().PrepNop()
				}
				if _, err := r.SubmitAndWait(uint32(batch)); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < batch; {
					n, err := r.ReapCQEs(cqes[got:])
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/nop")
		})
	}
}

func openBench(b *testing.B) (*os.File, int64) {
	b.Helper()
	size := benchfile.Size()
	f, err := os.OpenFile(benchfile.Shared(b, size), os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f, size / blockSize
}

// BenchmarkRandRead4K compares 4 KiB random O_DIRECT reads with 128 in
// flight driven on one ring by one goroutine against 128 goroutines calling
// pread, the os.File way. One op is one 4 KiB read.
func BenchmarkRandRead4K(b *testing.B) {
	const depth = 128
	b.Run("ring/qd=128", func(b *testing.B) { benchRing(b, depth, false) })
	b.Run("ring-fixed/qd=128", func(b *testing.B) { benchRing(b, depth, true) })
	b.Run("pread/goroutines=128", func(b *testing.B) { benchPread(b, depth) })
	b.Run("ring/qd=1", func(b *testing.B) { benchRing(b, 1, false) })
	b.Run("pread/goroutines=1", func(b *testing.B) { benchPread(b, 1) })
}

func benchRing(b *testing.B, depth int, fixed bool) {
	f, blocks := openBench(b)
	r := newRing(b, uint32(depth), nil)
	buf := testenv.AlignedBuf(b, depth*blockSize)
	fd := int(f.Fd())
	if fixed {
		if err := r.RegisterBuffers([][]byte{buf}); err != nil {
			b.Fatal(err)
		}
		if err := r.RegisterFiles([]int32{int32(fd)}); err != nil {
			b.Fatal(err)
		}
	}
	rng := bench.NewRand(0)
	prep := func(slot uint64) {
		sqe := r.GetSQE()
		off := int64(rng.Next()%uint64(blocks)) * blockSize
		dst := buf[slot*blockSize : (slot+1)*blockSize]
		if fixed {
			sqe.PrepReadFixed(0, dst, off, 0)
			sqe.Flags |= IOSQE_FIXED_FILE
		} else {
			sqe.PrepRead(fd, dst, off)
		}
		sqe.UserData = slot
	}
	cqes := make([]CQE, depth)
	b.SetBytes(blockSize)
	b.ReportAllocs()
	b.ResetTimer()
	issued, done := 0, 0
	for ; issued < depth && issued < b.N; issued++ {
		prep(uint64(issued))
	}
	for done < b.N {
		if _, err := r.SubmitAndWait(1); err != nil {
			b.Fatal(err)
		}
		n, err := r.ReapCQEs(cqes)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cqes[:n] {
			if c.Res != blockSize {
				b.Fatalf("read: res %d: %v", c.Res, c.Err())
			}
			done++
			if issued < b.N {
				prep(c.UserData)
				issued++
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IOPS")
}

func benchPread(b *testing.B, goroutines int) {
	f, blocks := openBench(b)
	fd := int(f.Fd())
	buf := testenv.AlignedBuf(b, goroutines*blockSize)
	var next atomic.Int64
	b.SetBytes(blockSize)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	m := bench.StartMeter()
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := bench.NewRand(uint64(g))
			dst := buf[g*blockSize : (g+1)*blockSize]
			for next.Add(1) <= int64(b.N) {
				off := int64(rng.Next()%uint64(blocks)) * blockSize
				if n, err := unix.Pread(fd, dst, off); n != blockSize {
					panic(fmt.Sprintf("pread: %d, %v", n, err))
				}
			}
		}(g)
	}
	wg.Wait()
	u := m.Stop()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IOPS")
	b.ReportMetric(float64(u.PeakThreads), "threads")
	runtime.KeepAlive(f)
}
