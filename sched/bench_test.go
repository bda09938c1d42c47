//go:build linux

package sched

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/benchfile"
	"github.com/diskio-go/diskio/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.InstallFilter() // DISKIO_TEST_SECCOMP
	code := m.Run()
	benchfile.Remove()
	os.Exit(code)
}

// benchSize is at least 2 GiB: far more than the device cache, so random
// reads reach the disk.
func benchSize() int64 { return max(benchfile.Size(), 2<<30) }

// report adds what the run cost to the benchmark's output: IOPS, CPU per
// op and peak OS threads.
func report(b *testing.B, m *bench.Meter) {
	u := m.Stop()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IOPS")
	b.ReportMetric(float64(u.CPU.Microseconds())/float64(b.N), "cpu-us/op")
	b.ReportMetric(float64(u.PeakThreads), "threads")
}

// readAt is one way to do a 4 KiB positioned read.
type readAt func(fd int, p []byte, off int64) (int, error)

// BenchmarkRandRead4K: 4 KiB random O_DIRECT reads over a 2 GiB file from
// G goroutines, through os.File, and through a scheduler on each backend.
// IOPS, CPU per op and peak OS threads are reported; run them side by side:
//
//	go test -run '^$' -bench RandRead4K -benchtime 200000x ./sched/
func BenchmarkRandRead4K(b *testing.B) {
	for _, g := range benchGoroutines() {
		b.Run(fmt.Sprintf("os.File/g=%d", g), func(b *testing.B) {
			f := openBench(b)
			benchReads(b, g, int(f.Fd()), func(fd int, p []byte, off int64) (int, error) { return f.ReadAt(p, off) })
		})
		for _, be := range []Backend{URing, AIO} {
			b.Run(fmt.Sprintf("%s/g=%d", be, g), func(b *testing.B) {
				s := newSched(b, be, Options{})
				f := openBench(b)
				benchReads(b, g, int(f.Fd()), s.ReadAt)
			})
		}
	}
	// Registered file and buffers (READ_FIXED, IOSQE_FIXED_FILE).
	b.Run("uring-fixed/g=128", func(b *testing.B) {
		s := newSched(b, URing, Options{})
		f := openBench(b)
		h, err := s.Open(int(f.Fd()), f.Name())
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Register(); err != nil {
			b.Fatal(err)
		}
		bufs, err := s.AllocBuffer(128 * blockSize)
		if err != nil || !s.arena.contains(bufs) {
			b.Fatalf("no registered buffer: %v %s", err, s.Fixed())
		}
		benchReadsInto(b, 128, int(f.Fd()), bufs, func(_ int, p []byte, off int64) (int, error) { return h.ReadAt(p, off) })
	})
	// Sharding: two schedulers, each goroutine bound to one.
	b.Run("uring-x2/g=128", func(b *testing.B) {
		s1, s2 := newSched(b, URing, Options{}), newSched(b, URing, Options{})
		f := openBench(b)
		var n atomic.Uint32
		benchReads(b, 128, int(f.Fd()), nil, func() readAt {
			if n.Add(1)%2 == 0 {
				return s1.ReadAt
			}
			return s2.ReadAt
		})
	})
}

// benchGoroutines is 1, 128 and 10000, or DISKIO_BENCH_GOROUTINES
// (comma-separated).
func benchGoroutines() []int {
	env := os.Getenv("DISKIO_BENCH_GOROUTINES")
	if env == "" {
		return []int{1, 128, 10000}
	}
	var gs []int
	for _, f := range strings.Split(env, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g <= 0 {
			panic("DISKIO_BENCH_GOROUTINES: bad count " + f)
		}
		gs = append(gs, g)
	}
	return gs
}

func openBench(b *testing.B) *os.File {
	f, err := os.OpenFile(benchfile.Shared(b, benchSize()), os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func benchReads(b *testing.B, goroutines, fd int, read readAt, perG ...func() readAt) {
	// One aligned 4 KiB buffer per goroutine, from one mapping.
	benchReadsInto(b, goroutines, fd, testenv.AlignedBuf(b, goroutines*blockSize), read, perG...)
}

func benchReadsInto(b *testing.B, goroutines, fd int, bufs []byte, read readAt, perG ...func() readAt) {
	size := benchSize()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.SetBytes(blockSize)
	b.ReportAllocs()
	runtime.GC()
	m := bench.StartMeter()
	b.ResetTimer()
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		rd := read
		if len(perG) > 0 {
			rd = perG[0]()
		}
		go func(g int) {
			defer wg.Done()
			rng := bench.NewRand(uint64(g))
			p := bufs[g*blockSize : (g+1)*blockSize]
			for next.Add(1) <= int64(b.N) {
				off := rng.Offset(size, blockSize)
				if n, err := rd(fd, p, off); n != blockSize {
					panic(fmt.Sprintf("read at %d: %d, %v", off, n, err))
				}
			}
		}(g)
	}
	wg.Wait()
	b.StopTimer()
	report(b, m)
}

// BenchmarkNop is the ceiling of one scheduler: requests per second it
// carries when the kernel does nothing for them (the idle fast path is off,
// so every request goes through the loop).
func BenchmarkNop(b *testing.B) {
	for _, g := range []int{128, 1024} {
		b.Run(fmt.Sprintf("uring/g=%d", g), func(b *testing.B) {
			s := newSched(b, URing, Options{NoInline: true})
			b.ReportAllocs()
			b.SetParallelism(max(1, g/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.nop(); err != nil {
						panic(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkOnCaller is what a request on the idle fast path costs besides
// its system call: one goroutine's no-op requests, each made on the caller
// (place, statistics, slow watch) with nothing for the kernel to do.
func BenchmarkOnCaller(b *testing.B) {
	s := newSched(b, URing, Options{})
	b.ReportAllocs()
	for b.Loop() {
		if err := s.nop(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBlockedWrites is what the ring's round trip costs a classified
// write the kernel cannot make without blocking (here a buffered one,
// which ext4 refuses under RWF_NOWAIT) while the loop has work in flight:
// "probe" sends each to the ring first (the descriptor classified afresh
// before each write), "skip" lets the file's writes go to their caller
// once one has come back (nowaitProbe).
func BenchmarkBlockedWrites(b *testing.B) {
	for _, probe := range []bool{true, false} {
		name := map[bool]string{true: "probe", false: "skip"}[probe]
		b.Run(name, func(b *testing.B) {
			s := newSched(b, URing, Options{})
			end := busy(b, s)
			defer end()
			f, err := os.CreateTemp(b.TempDir(), "wal")
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			h := classed(b, s, int(f.Fd()), Latency)
			buf := make([]byte, 4096)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if probe {
					_ = h.SetClass(Latency)
				}
				if _, err := h.WriteAt(buf, int64(i%4096)*4096); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
