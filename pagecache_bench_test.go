//go:build linux

package diskio_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/benchfile"
	"github.com/diskio-go/diskio/sched"
)

// BenchmarkPageCache: buffered files (PageCache) against os.File and
// O_DIRECT files (Direct, DirectRequired), side by side: 4 KiB random reads of a hot file (its first 256 MiB, read into the
// page cache first) at 1, 8 and 128 goroutines; of a cold one (evicted
// before the run) at 128; a cold sequential scan in 128 KiB reads; and
// io.Copy of a hot 4 MiB file to io.Discard. Besides ns/op it reports
// IOPS, process CPU µs per op and the peak of OS threads.
//
//	CGO_ENABLED=0 go test -c -o diskio.test . && DISKIO_BENCH_FILE=/tmp/f.dat ./diskio.test \
//	  -test.run '^$' -test.bench PageCache -test.benchtime 200000x -test.count 2
//
// The cold rows read each block once at most only if the file is much
// larger than b.N x 4 KiB (DISKIO_BENCH_SIZE, default 2 GiB: use 4G or a
// DISKIO_BENCH_FILE that large with 200000x); the scan reads b.N x 128 KiB
// from offset 0, at most the whole file once (its MB/s metric counts what
// it read).
func BenchmarkPageCache(b *testing.B) {
	size := benchfile.Size()
	path := benchfile.Shared(b, size)
	s, err := sched.New(sched.Options{Backend: sched.URing})
	if err != nil {
		b.Skip(err)
	}
	defer s.Close()
	open := func(b *testing.B, kind string) (reader, func()) {
		if kind == "os.File" {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			return f, func() { f.Close() }
		}
		mode := diskio.PageCache
		if kind == "Direct" {
			mode = diskio.DirectRequired
		}
		f, err := diskio.OpenFile(path, os.O_RDONLY, 0, diskio.WithScheduler(s), diskio.WithDirect(mode))
		if err != nil {
			b.Skip(err)
		}
		return f, func() { f.Close() }
	}
	kinds := []string{"PageCache", "os.File", "Direct"}
	const hot = 256 << 20
	for _, g := range []int{1, 8, 128} {
		for _, k := range kinds {
			b.Run(fmt.Sprintf("hot/%s/g=%d", k, g), func(b *testing.B) {
				if err := bench.Warm(path, min(hot, size)); err != nil {
					b.Fatal(err)
				}
				f, done := open(b, k)
				defer done()
				measure(b, func() { parallelRandomReads(b, g, min(hot, size), f) })
			})
		}
	}
	for _, k := range kinds {
		b.Run(fmt.Sprintf("cold/%s/g=128", k), func(b *testing.B) {
			if err := bench.Evict(path); err != nil {
				b.Fatal(err)
			}
			f, done := open(b, k)
			defer done()
			measure(b, func() { parallelRandomReads(b, 128, size, f) })
		})
	}
	for _, k := range kinds {
		b.Run(fmt.Sprintf("scan128K/%s", k), func(b *testing.B) {
			if err := bench.Evict(path); err != nil {
				b.Fatal(err)
			}
			f, done := open(b, k)
			defer done()
			p := make([]byte, 128<<10)
			reads := min(int64(b.N), size/int64(len(p)))
			measure(b, func() {
				for i := range reads {
					if n, err := f.ReadAt(p, i*int64(len(p))); n != len(p) {
						b.Fatalf("ReadAt: %d, %v", n, err)
					}
				}
			})
			b.ReportMetric(float64(reads)*float64(len(p))/b.Elapsed().Seconds()/1e6, "MB/s")
		})
	}
	copyPath := path + ".copy"
	if err := copyPrefix(path, copyPath, 4<<20); err != nil {
		b.Fatal(err)
	}
	defer os.Remove(copyPath)
	for _, k := range kinds {
		b.Run(fmt.Sprintf("copy4M/%s", k), func(b *testing.B) {
			if err := bench.Warm(copyPath, 4<<20); err != nil {
				b.Fatal(err)
			}
			var f io.ReadSeekCloser
			var err error
			switch k {
			case "os.File":
				f, err = os.Open(copyPath)
			case "Direct":
				f, err = diskio.OpenFile(copyPath, os.O_RDONLY, 0, diskio.WithScheduler(s), diskio.WithDirect(diskio.DirectRequired))
			default:
				f, err = diskio.OpenFile(copyPath, os.O_RDONLY, 0, diskio.WithScheduler(s), diskio.WithDirect(diskio.PageCache))
			}
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.SetBytes(4 << 20)
			measure(b, func() {
				for range b.N {
					if _, err := f.Seek(0, io.SeekStart); err != nil {
						b.Fatal(err)
					}
					if n, err := io.Copy(io.Discard, f); n != 4<<20 || err != nil {
						b.Fatalf("io.Copy: %d, %v", n, err)
					}
				}
			})
		})
	}
}

// BenchmarkPageCacheHit: what one page-cache hit costs, one goroutine on
// one locked thread, through each way of making it: os.File.ReadAt
// (pread64 with the runtime's syscall entry), a PageCache File's ReadAt,
// and the bare system calls with nothing around them (RawSyscall6):
// preadv2 with RWF_NOWAIT, as PageCache makes it, and pread64, which
// cannot be told not to wait. The kinds alternate in 21 rounds of b.N/21
// reads each (the order rotated each round); each reports the median of
// its rounds' thread CPU time per read (CLOCK_THREAD_CPUTIME_ID: other
// threads' and processes' work does not count) and its ratio to
// os.File's. ns/op is the whole run's, all kinds together. 1-byte reads
// show the per-call cost without the copy.
//
//	go test -run '^$' -bench PageCacheHit -benchtime 1000000x .
func BenchmarkPageCacheHit(b *testing.B) {
	s, err := sched.New(sched.Options{Backend: sched.URing})
	if err != nil {
		b.Skip(err)
	}
	defer s.Close()
	const size = 16 << 20
	path := filepath.Join(b.TempDir(), "hot")
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		b.Fatal(err)
	}
	of, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer of.Close()
	df, err := diskio.OpenFile(path, os.O_RDONLY, 0, diskio.WithScheduler(s), diskio.WithDirect(diskio.PageCache))
	if err != nil {
		b.Fatal(err)
	}
	defer df.Close()
	fd := int(of.Fd())
	kinds := []struct {
		name string
		r    reader
	}{
		{"os.File", of},
		{"PageCache", df},
		{"preadv2-nowait", rawReader(func(p []byte, off int64) (int, syscall.Errno) {
			iov := unix.Iovec{Base: &p[0]}
			iov.SetLen(len(p))
			r, _, e := syscall.RawSyscall6(unix.SYS_PREADV2, uintptr(fd), uintptr(unsafe.Pointer(&iov)), 1, uintptr(off), 0, unix.RWF_NOWAIT)
			return int(r), e
		})},
		{"pread64", rawReader(func(p []byte, off int64) (int, syscall.Errno) {
			r, _, e := syscall.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(off), 0, 0)
			return int(r), e
		})},
	}
	threadCPU := func() time.Duration {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ts.Nano())
	}
	for _, bs := range []int{1, 4096} {
		b.Run(fmt.Sprintf("bs=%d", bs), func(b *testing.B) {
			if err := bench.Warm(path, size); err != nil {
				b.Fatal(err)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			const rounds = 21
			chunk := max(b.N/rounds, 1)
			p := make([]byte, bs)
			cpu := make([][]float64, len(kinds))
			next := uint64(0)
			b.ResetTimer()
			for r := range rounds {
				for i := range kinds {
					k := (i + r) % len(kinds)
					t0 := threadCPU()
					for range chunk {
						next++
						off := int64(next*0x9e3779b97f4a7c15%(size/4096)) * 4096
						if n, err := kinds[k].r.ReadAt(p, off); n != bs {
							b.Fatalf("%s: ReadAt: %d, %v", kinds[k].name, n, err)
						}
					}
					cpu[k] = append(cpu[k], float64(threadCPU()-t0)/float64(chunk))
				}
			}
			b.StopTimer()
			base := median(cpu[0])
			for k, kind := range kinds {
				m := median(cpu[k])
				b.ReportMetric(m, kind.name+"-cpu-ns/read")
				if k > 0 {
					b.ReportMetric(m/base, kind.name+"/os.File")
				}
			}
		})
	}
}

func median(x []float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	return y[len(y)/2]
}

// rawReader is a bare system call as a reader (for the 16 MiB file of
// BenchmarkPageCacheHit: 64-bit systems, or offsets that fit a word).
type rawReader func(p []byte, off int64) (int, syscall.Errno)

func (r rawReader) ReadAt(p []byte, off int64) (int, error) {
	n, e := r(p, off)
	if e != 0 {
		return 0, e
	}
	return n, nil
}

type reader interface {
	ReadAt(p []byte, off int64) (int, error)
}

// measure runs fn as the benchmark's timed work and reports IOPS (b.N per
// second), process CPU per op and the OS thread peak.
func measure(b *testing.B, fn func()) {
	b.ReportAllocs()
	b.ResetTimer()
	m := bench.StartMeter()
	fn()
	u := m.Stop()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/u.Elapsed.Seconds(), "IOPS")
	b.ReportMetric(float64(u.CPU.Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(u.PeakThreads), "threads")
}

// parallelRandomReads shares b.N 4 KiB reads at random block offsets in
// [0, span) among g goroutines.
func parallelRandomReads(b *testing.B, g int, span int64, f reader) {
	const bs = 4096
	blocks := uint64(span / bs)
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(i)*0x9e3779b97f4a7c15 + 1
			p := make([]byte, bs)
			for next.Add(1) <= int64(b.N) {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				if n, err := f.ReadAt(p, int64(x%blocks)*bs); n != bs {
					panic(fmt.Sprintf("read: %d, %v", n, err))
				}
			}
		}()
	}
	wg.Wait()
}

// copyPrefix writes the first n bytes of src to a new file dst.
func copyPrefix(src, dst string, n int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(out, in, n); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return unix.Access(dst, unix.R_OK)
}

// BenchmarkHitSyscalls: the kernel's cost of one 4 KiB page-cache hit by
// each read a File could make: pread64 (os.File's), preadv2 without flags,
// and preadv2 with RWF_NOWAIT (a page-cache File's, the only read that
// never waits for the disk).
//
//	go test -run '^$' -bench HitSyscalls -benchtime 2000000x -count 4 .
func BenchmarkHitSyscalls(b *testing.B) {
	name := filepath.Join(b.TempDir(), "hits")
	const size = 64 << 20
	if err := os.WriteFile(name, make([]byte, size), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fd := uintptr(f.Fd())
	p := make([]byte, 4096)
	for _, c := range []struct {
		name  string
		nr    uintptr
		flags uintptr
	}{{"pread64", unix.SYS_PREAD64, 0}, {"preadv2", unix.SYS_PREADV2, 0}, {"preadv2-nowait", unix.SYS_PREADV2, unix.RWF_NOWAIT}} {
		b.Run(c.name, func(b *testing.B) {
			iov := unix.Iovec{Base: &p[0]}
			iov.SetLen(len(p))
			for i := range b.N {
				off := uintptr(i*7919%(size/4096)) * 4096
				var r uintptr
				var e syscall.Errno
				if c.nr == unix.SYS_PREAD64 {
					r, _, e = syscall.Syscall6(c.nr, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), off, 0, 0)
				} else {
					r, _, e = syscall.Syscall6(c.nr, fd, uintptr(unsafe.Pointer(&iov)), 1, off, 0, c.flags)
				}
				if e != 0 || int(r) != len(p) {
					b.Fatalf("%s: %d, %v", c.name, r, e)
				}
			}
		})
	}
}
