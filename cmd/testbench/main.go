//go:build linux

// Command testbench compares disk I/O schedulers on your own disk.
//
// With no arguments it reports what the kernel offers (io_uring features and
// opcodes, Linux AIO, O_DIRECT alignment of the directory), then runs 4 KiB
// random O_DIRECT reads on a temporary file through os.File and through
// diskio's scheduler on io_uring and on Linux AIO, at 1 and 128 goroutines,
// and prints one table with the ratios to os.File. The file is created in the
// current directory (or -dir) and removed at the end.
//
// This is the first version; the presets that reproduce the source
// experiments, write and scan workloads, -json, -plot and -fio come with the
// testbench issue.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/aio"
	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/uring"
)

func main() {
	info := flag.Bool("info", false, "only report what the kernel and the directory support")
	dir := flag.String("dir", ".", "directory for the temporary test file")
	size := flag.Int64("size", 1<<30, "test file size in bytes")
	dur := flag.Duration("duration", 3*time.Second, "duration of each run")
	gs := flag.String("goroutines", "1,128", "comma-separated goroutine counts")
	scheds := flag.String("schedulers", "uring,aio,os.File", "comma-separated schedulers to compare (uring, aio, blocking, os.File); os.File last keeps the thread counts of the others clean")
	noInline := flag.Bool("noinline", false, "send even a lone request through the scheduler loop (no idle fast path)")
	file := flag.String("file", "", "use this existing file of real data (not removed) instead of writing a temporary one")
	flag.Parse()

	schedulers := strings.Split(*scheds, ",")
	opts := sched.Options{NoInline: *noInline}
	report(*dir)
	if *info {
		return
	}
	var counts []int
	for _, s := range strings.Split(*gs, ",") {
		var n int
		if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
			fatalf("bad -goroutines %q", *gs)
		}
		counts = append(counts, n)
	}
	path := *file
	if path == "" {
		var err error
		if path, err = makeFile(*dir, *size); err != nil {
			fatalf("creating test file: %v", err)
		}
		defer os.Remove(path)
		removeOnSignal(path)
	} else if st, err := os.Stat(path); err != nil {
		fatalf("%v", err)
	} else {
		*size = st.Size()
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		fatalf("opening with O_DIRECT: %v", err)
	}
	defer f.Close()

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "workload\tgoroutines\tscheduler\tIOPS\tvs os.File\tp50 µs\tp99 µs\tCPU µs/op\tOS threads\t\n")
	for _, g := range counts {
		var base float64
		var results []result
		// os.File last: the threads it leaves behind would inflate
		// the counts of the runs after it.
		for _, name := range schedulers {
			res, err := run(name, opts, f, *size, g, *dur)
			if err != nil {
				fmt.Fprintf(tw, "randread 4k\t%d\t%s\t%v\t\t\t\t\t\t\n", g, name, err)
				continue
			}
			if name == "os.File" {
				base = res.iops
			}
			res.name = name
			results = append(results, res)
		}
		for _, r := range results {
			ratio := "-" // no os.File run to compare with
			if base > 0 {
				ratio = fmt.Sprintf("%.2fx", r.iops/base)
			}
			fmt.Fprintf(tw, "randread 4k\t%d\t%s\t%.0f\t%s\t%.1f\t%.1f\t%.2f\t%d\t\n", g, r.name, r.iops, ratio, r.p50, r.p99, r.cpuPerOp, r.threads)
		}
	}
	tw.Flush()
}

type result struct {
	name           string
	iops, p50, p99 float64
	cpuPerOp       float64
	threads        int
}

func report(dir string) {
	fmt.Printf("Go %s, GOMAXPROCS %d\n", runtime.Version(), runtime.GOMAXPROCS(0))
	if info, err := uring.Detect(); err != nil {
		fmt.Printf("io_uring: unavailable: %v\n", err)
	} else {
		fmt.Print(info)
	}
	if ctx, err := aio.Setup(1); err != nil {
		fmt.Printf("Linux AIO: unavailable: %v\n", err)
	} else {
		fmt.Printf("Linux AIO: available (completions reaped from the user ring: %v)\n", ctx.UserRing())
		ctx.Destroy()
	}
	if a, err := dio.ProbeAlignment(dir); err != nil {
		fmt.Printf("O_DIRECT in %s: %v\n", dir, err)
	} else {
		fs, _ := dio.FSType(dir)
		fmt.Printf("O_DIRECT in %s (%s): %s\n", dir, fs, a)
	}
	fmt.Println()
}

// makeFile writes size bytes of pseudo-random data (never a fallocated
// file: reading unwritten extents returns zeros without touching the disk).
func makeFile(dir string, size int64) (string, error) {
	f, err := os.CreateTemp(dir, "testbench-*.dat")
	if err != nil {
		return "", err
	}
	defer f.Close()
	fmt.Fprintf(os.Stderr, "writing %d MiB test file %s ...\n", size>>20, f.Name())
	buf := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{'t', 'e', 's', 't', 'b', 'e', 'n', 'c', 'h'})
	for off := int64(0); off < size; off += int64(len(buf)) {
		rng.Read(buf)
		n := min(int64(len(buf)), size-off)
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			os.Remove(f.Name())
			return "", err
		}
	}
	if err := f.Sync(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	unix.Fadvise(int(f.Fd()), 0, size, unix.FADV_DONTNEED)
	return f.Name(), nil
}

func run(name string, opts sched.Options, f *os.File, size int64, goroutines int, dur time.Duration) (result, error) {
	var read func(p []byte, off int64) (int, error)
	fd := int(f.Fd())
	switch name {
	case "os.File":
		read = f.ReadAt
	default:
		opts.Backend = sched.Backend(name)
		s, err := sched.New(opts)
		if err != nil {
			return result{}, err
		}
		defer s.Close()
		read = func(p []byte, off int64) (int, error) { return s.ReadAt(fd, p, off) }
	}
	const bs = 4096
	bufs, err := mem.Map(goroutines * bs)
	if err != nil {
		return result{}, err
	}
	defer mem.Unmap(bufs)
	blocks := uint64(size / bs)
	var stop atomic.Bool
	var ops atomic.Int64
	lats := make([][]time.Duration, goroutines)
	var wg sync.WaitGroup
	peak := threads()
	cpu0 := cpuTime()
	start := time.Now()
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x := uint64(g)*0x9e3779b97f4a7c15 + 1
			p := bufs[g*bs : (g+1)*bs]
			// At most 4M latency samples in all: 10,000
			// goroutines with 64K each would be 5 GB.
			lat := make([]time.Duration, 0, max(64, (4<<20)/goroutines))
			for !stop.Load() {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				t := time.Now()
				if n, err := read(p, int64(x%blocks)*bs); n != bs {
					panic(fmt.Sprintf("%s read: %d, %v", name, n, err))
				}
				if len(lat) < cap(lat) {
					lat = append(lat, time.Since(t))
				}
				ops.Add(1)
			}
			lats[g] = lat
		}(g)
	}
	for t := time.Now(); time.Since(t) < dur; time.Sleep(10 * time.Millisecond) {
		peak = max(peak, threads())
	}
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	n := float64(ops.Load())
	return result{
		iops:     n / elapsed.Seconds(),
		p50:      us(all[len(all)/2]),
		p99:      us(all[len(all)*99/100]),
		cpuPerOp: float64(cpu.Microseconds()) / n,
		threads:  peak,
	}, nil
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// threads counts the process's OS threads; with DISKIO_TESTBENCH_THREADS
// set it also prints their names (io_uring's kernel workers are threads of
// the process too: iou-wrk-*, iou-sqp-*).
func threads() int {
	ents, _ := os.ReadDir("/proc/self/task")
	if os.Getenv("DISKIO_TESTBENCH_THREADS") != "" {
		var names []string
		for _, e := range ents {
			comm, _ := os.ReadFile("/proc/self/task/" + e.Name() + "/comm")
			names = append(names, strings.TrimSpace(string(comm)))
		}
		fmt.Fprintln(os.Stderr, len(ents), names)
	}
	return len(ents)
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// removeOnSignal deletes the temporary file when the run is interrupted, so
// a Ctrl-C does not leave a gigabyte behind.
func removeOnSignal(path string) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-c
		os.Remove(path)
		fmt.Fprintf(os.Stderr, "testbench: %v: removed %s\n", sig, path)
		os.Exit(130)
	}()
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "testbench: "+format+"\n", args...)
	os.Exit(1)
}
