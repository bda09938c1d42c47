//go:build linux

package diskio_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/internal/sys"
)

// benchDir is where the durable benchmarks write: DISKIO_BENCH_DIR, or a
// temporary directory (on this machine ext4).
func benchDir(b *testing.B) string {
	if d := os.Getenv("DISKIO_BENCH_DIR"); d != "" {
		return d
	}
	return b.TempDir()
}

// randomBytes returns n pseudo-random bytes, the same for the same seed
// (as the package's tests make them).
func randomBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

// BenchmarkGroupCommit: 64 goroutines each append 4 KiB and wait for it
// to be durable, over and over: through one File (O_DIRECT, WriteAt +
// Datasync; concurrent Datasyncs share flushes) against os.File (buffered
// pwrite + fdatasync, each caller its own flush). The metric is commits/s.
//
//	go test -run '^$' -bench GroupCommit -benchtime 20000x -count 3 .
func BenchmarkGroupCommit(b *testing.B) {
	const goroutines, size = 64, 4096
	commit := func(b *testing.B, write func(p []byte, off int64) error, flush func() error) {
		var next atomic.Int64
		var failed atomic.Value
		per := (b.N + goroutines - 1) / goroutines
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := mem.Map(size)
				if err != nil {
					failed.Store(err)
					return
				}
				defer mem.Unmap(p)
				p[0] = byte(g)
				for range per {
					if err := write(p, next.Add(size)-size); err != nil {
						failed.Store(err)
						return
					}
					if err := flush(); err != nil {
						failed.Store(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		el := time.Since(start)
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(per*goroutines)/el.Seconds(), "commits/s")
	}
	// Space: none (each append extends the file), keepsize (reserved
	// with FALLOC_FL_KEEP_SIZE, as log files do), prealloc (reserved and
	// the size set: appends overwrite unwritten extents), overwrite (the
	// file written and synced beforehand, as a recycled log file is:
	// appends change no metadata, so a flush is only the device's).
	reserve := func(fd int, mode string, n int64) error {
		switch mode {
		case "keepsize":
			return unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, n)
		case "prealloc":
			return unix.Fallocate(fd, 0, 0, n)
		case "overwrite":
			buf := make([]byte, 1<<20)
			for off := int64(0); off < n; off += int64(len(buf)) {
				if _, err := unix.Pwrite(fd, buf[:min(int64(len(buf)), n-off)], off); err != nil {
					return err
				}
			}
			if err := unix.Fdatasync(fd); err != nil {
				return err
			}
			// Out of the page cache, as diskio's O_DIRECT copy is: with
			// the pages cached, os.File's commits ran at half the rate
			// (8.8-10.0k against 19.7-22.7k commits/s, two rounds).
			return unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
		}
		return nil
	}
	for _, mode := range []string{"none", "keepsize", "prealloc", "overwrite"} {
		b.Run("diskio/"+mode, func(b *testing.B) {
			f, err := diskio.OpenFile(filepath.Join(benchDir(b), "gc-diskio"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			n := int64(b.N+goroutines) * size
			switch mode {
			case "keepsize":
				err = f.PreallocateKeepSize(0, n)
			case "prealloc":
				err = f.Preallocate(0, n)
			case "overwrite":
				buf := make([]byte, 1<<20)
				for off := int64(0); off < n && err == nil; off += int64(len(buf)) {
					_, err = f.WriteAt(buf[:min(int64(len(buf)), n-off)], off)
				}
				if err == nil {
					err = f.Datasync()
				}
			}
			if err != nil {
				b.Fatal(err)
			}
			commit(b, func(p []byte, off int64) error { _, err := f.WriteAt(p, off); return err }, f.Datasync)
		})
		b.Run("os.File/"+mode, func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(benchDir(b), "gc-os"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			fd := int(f.Fd())
			if err := reserve(fd, mode, int64(b.N+goroutines)*size); err != nil {
				b.Fatal(err)
			}
			commit(b, func(p []byte, off int64) error { _, err := f.WriteAt(p, off); return err },
				func() error { return sys.Fdatasync(fd) })
		})
	}
}

// durableSize is the bytes each durable sequential write run writes:
// DISKIO_BENCH_DURABLE_SIZE (like "1G"), default 256 MiB.
func durableSize(b *testing.B) int64 {
	s := os.Getenv("DISKIO_BENCH_DURABLE_SIZE")
	if s == "" {
		return 256 << 20
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'G', 'g':
		mult, s = 1<<30, s[:len(s)-1]
	case 'M', 'm':
		mult, s = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return n * mult
}

// BenchmarkDurableSeqWrite: a new file written front to back in 512 KiB
// O_DIRECT writes and made durable (fdatasync) at the end, each iteration
// one whole file. Side by side: diskio's StreamWriter (8 writes in
// flight, the honest user path) with and without Preallocate; fio with
// the same shape (io_uring, iodepth 8, end_fsync; fio preallocates by
// default, so also --fallocate=none); and os.File with O_DIRECT|O_SYNC,
// one write at a time. The metric is MB/s (wall clock, including the
// final flush and, for fio, starting the process).
//
//	DISKIO_BENCH_DURABLE_SIZE=1G go test -run '^$' -bench DurableSeqWrite -benchtime 2x .
func BenchmarkDurableSeqWrite(b *testing.B) {
	size := durableSize(b)
	const bs = 512 << 10
	dir := benchDir(b)
	path := filepath.Join(dir, "seq")
	run := func(b *testing.B, once func() error) {
		b.SetBytes(size)
		var total time.Duration
		for range b.N {
			os.Remove(path)
			start := time.Now()
			if err := once(); err != nil {
				b.Fatal(err)
			}
			total += time.Since(start)
		}
		b.ReportMetric(float64(size)*float64(b.N)/total.Seconds()/1e6, "MB/s")
		os.Remove(path)
	}
	stream := func(prealloc bool) func() error {
		return func() error {
			f, err := diskio.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644, diskio.WithDirect(diskio.DirectRequired))
			if err != nil {
				return err
			}
			defer f.Close()
			if prealloc {
				if err := f.Preallocate(0, size); err != nil {
					return err
				}
			}
			w, err := f.NewStreamWriter(0, diskio.StreamOptions{BufferSize: bs, ReadAhead: 8})
			if err != nil {
				return err
			}
			chunk := randomBytes(bs, 1)
			for off := int64(0); off < size; off += bs {
				if _, err := w.Write(chunk); err != nil {
					return err
				}
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
			return f.Datasync()
		}
	}
	b.Run("diskio-stream", func(b *testing.B) { run(b, stream(false)) })
	b.Run("diskio-stream-prealloc", func(b *testing.B) { run(b, stream(true)) })
	fio := func(extra ...string) func() error {
		return func() error {
			args := append([]string{"--name=w", "--filename=" + path, "--size=" + strconv.FormatInt(size, 10),
				"--direct=1", "--bs=512k", "--iodepth=8", "--rw=write", "--ioengine=io_uring", "--end_fsync=1",
				"--output-format=json"}, extra...)
			out, err := exec.Command("fio", args...).Output()
			if err != nil {
				return fmt.Errorf("fio: %v", err)
			}
			var res struct{ Jobs []struct{ Error int } }
			if err := json.Unmarshal(out, &res); err != nil || len(res.Jobs) != 1 || res.Jobs[0].Error != 0 {
				return fmt.Errorf("fio: unexpected output (%v): %.200s", err, out)
			}
			return nil
		}
	}
	if _, err := exec.LookPath("fio"); err == nil {
		b.Run("fio", func(b *testing.B) { run(b, fio()) })
		b.Run("fio-fallocate=none", func(b *testing.B) { run(b, fio("--fallocate=none")) })
	}
	b.Run("os.File-O_DIRECT|O_SYNC", func(b *testing.B) {
		run(b, func() error {
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_DIRECT|unix.O_SYNC, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			p, err := mem.Map(bs)
			if err != nil {
				return err
			}
			defer mem.Unmap(p)
			copy(p, randomBytes(bs, 1))
			for off := int64(0); off < size; off += bs {
				if _, err := f.WriteAt(p, off); err != nil {
					return err
				}
			}
			return f.Sync()
		})
	})
}

// BenchmarkAppendDSync: 4 KiB O_DIRECT appends, each durable on return
// (WriteAtDSync), 8 writers, into a new file, without and with the space
// reserved first (Preallocate, and PreallocateKeepSize). The metric is
// appends/s.
//
//	go test -run '^$' -bench AppendDSync -benchtime 20000x -count 3 .
func BenchmarkAppendDSync(b *testing.B) {
	const writers, size = 8, 4096
	for _, mode := range []string{"none", "prealloc", "keepsize"} {
		b.Run(mode, func(b *testing.B) {
			f, err := diskio.OpenFile(filepath.Join(benchDir(b), "app-"+mode), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, diskio.WithDirect(diskio.DirectRequired))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			total := int64(b.N+writers) * size
			switch mode {
			case "prealloc":
				err = f.Preallocate(0, total)
			case "keepsize":
				err = f.PreallocateKeepSize(0, total)
			}
			if err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			per := (b.N + writers - 1) / writers
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p, _ := mem.Map(size)
					defer mem.Unmap(p)
					for range per {
						if _, err := f.WriteAtDSync(p, next.Add(size)-size); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(per*writers)/time.Since(start).Seconds(), "appends/s")
		})
	}
}

// BenchmarkSoak is the soak (not part of the default run; -bench Soak
// runs it): DISKIO_SOAK_GOROUTINES (10000) goroutines doing mixed
// unaligned reads and writes of their own regions of one File for
// DISKIO_SOAK_DURATION (60s), checking every read, then reporting the
// peak OS threads and RSS. It fails on any error or wrong byte, or when
// the process grows past 200 OS threads.
//
//	go test -run '^$' -bench Soak -benchtime 1x .
func BenchmarkSoak(b *testing.B) {
	n, d := 10000, 60*time.Second
	if s := os.Getenv("DISKIO_SOAK_GOROUTINES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("DISKIO_SOAK_DURATION"); s != "" {
		d, _ = time.ParseDuration(s)
	}
	f, err := diskio.OpenFile(filepath.Join(benchDir(b), "soak"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const region = 3000 // unaligned: neighbours share blocks
	var ops, bad atomic.Int64
	deadline := time.Now().Add(d)
	var peakThreads, peakRSS atomic.Int64
	stop := make(chan struct{})
	go func() { // sample threads and RSS
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			th, rss := procStatus()
			peakThreads.Store(max(peakThreads.Load(), th))
			peakRSS.Store(max(peakRSS.Load(), rss))
		}
	}()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := int64(g) * region
			mine := make([]byte, region)
			got := make([]byte, region)
			for i := 0; time.Now().Before(deadline); i++ {
				off := (i * 7919) % (region - 1)
				m := 1 + (i*131)%(region-off)
				for j := range m {
					mine[off+j] = byte(g + i + j)
				}
				if _, err := f.WriteAt(mine[off:off+m], base+int64(off)); err != nil {
					b.Error(err)
					bad.Add(1)
					return
				}
				if i%16 == 15 {
					if err := f.Datasync(); err != nil {
						b.Error(err)
						bad.Add(1)
						return
					}
				}
				if _, err := f.ReadAt(got[:m], base+int64(off)); err != nil || string(got[:m]) != string(mine[off:off+m]) {
					b.Errorf("goroutine %d: read back: %v", g, err)
					bad.Add(1)
					return
				}
				ops.Add(2)
			}
		}()
	}
	wg.Wait()
	close(stop)
	th, rss := procStatus()
	peakThreads.Store(max(peakThreads.Load(), th))
	peakRSS.Store(max(peakRSS.Load(), rss))
	b.ReportMetric(float64(ops.Load())/d.Seconds(), "ops/s")
	b.ReportMetric(float64(peakThreads.Load()), "peak-threads")
	b.ReportMetric(float64(peakRSS.Load())/(1<<20), "peak-RSS-MiB")
	if bad.Load() > 0 {
		b.Fatalf("%d goroutines failed", bad.Load())
	}
	if peakThreads.Load() > 200 {
		b.Fatalf("%d OS threads: not bounded", peakThreads.Load())
	}
	runtime.KeepAlive(f)
}

// procStatus returns this process's OS threads and resident bytes.
func procStatus() (threads, rss int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var v int64
		if _, err := fmt.Sscanf(line, "Threads: %d", &v); err == nil {
			threads = v
		}
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &v); err == nil {
			rss = v << 10
		}
	}
	return threads, rss
}

// BenchmarkWALAppend: one writer appending 100 B, 1 KiB and 64 KiB records with
// Datasync after each, on a growing, a preallocated and a recycled file:
// diskio (durable writes in one trip, durability_linux.go) against
// os.File (write, then fdatasync). Metric: appends/s.
//
//	go test -run '^$' -bench WALAppend -benchtime 2000x -count 2 .
func BenchmarkWALAppend(b *testing.B) {
	kinds := []string{"growing", "prealloc", "recycled"}
	backends := []string{"diskio", "os.File"}
	if v := os.Getenv("DISKIO_BENCH_WAL_BACKENDS"); v != "" {
		backends = strings.Split(v, ",")
	}
	for _, kind := range kinds {
		for _, size := range []int{100, 1024, 64 << 10} {
			for _, be := range backends {
				b.Run(fmt.Sprintf("%s/%d/%s", kind, size, be), func(b *testing.B) {
					name := filepath.Join(benchDir(b), "wal")
					n := int64(b.N+1) * int64(size)
					os.Remove(name)
					o, err := os.Create(name)
					if err != nil {
						b.Fatal(err)
					}
					if kind == "prealloc" {
						err = unix.Fallocate(int(o.Fd()), 0, 0, n)
					} else if kind == "recycled" {
						_, err = o.Write(make([]byte, n))
						if err == nil {
							err = unix.Fdatasync(int(o.Fd()))
						}
						unix.Fadvise(int(o.Fd()), 0, 0, unix.FADV_DONTNEED)
					}
					o.Close()
					if err != nil {
						b.Fatal(err)
					}
					rec := make([]byte, size)
					var write func(p []byte, off int64) error
					var flush func() error
					var done func() error
					if be == "os.File" {
						f, err := os.OpenFile(name, os.O_RDWR, 0)
						if err != nil {
							b.Fatal(err)
						}
						write = func(p []byte, off int64) error { _, err := f.WriteAt(p, off); return err }
						flush = func() error { return sys.Fdatasync(int(f.Fd())) }
						done = f.Close
					} else {
						f, err := diskio.OpenFile(name, os.O_RDWR, 0)
						if err != nil {
							b.Fatal(err)
						}
						write = func(p []byte, off int64) error { _, err := f.WriteAt(p, off); return err }
						flush = f.Datasync
						done = f.Close
					}
					b.ResetTimer()
					start := time.Now()
					for i := range b.N {
						if err := write(rec, int64(i*size)); err != nil {
							b.Fatal(err)
						}
						if err := flush(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
					b.StopTimer()
					if err := done(); err != nil {
						b.Fatal(err)
					}
				})
			}
		}
	}
}
