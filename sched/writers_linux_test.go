//go:build linux

package sched

import (
	"fmt"
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

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/testenv"
)

// Writers that extend their files and sync them are where io_uring hands
// work to its worker threads. The process, counted whole (iou-wrk workers
// included), stays within GOMAXPROCS + 6 + the worker cap, on io_uring and
// on AIO, with 64 and with 1,000 writers, and io_uring's workers are those
// of one submitting thread (before the loop locked itself, 64 writers
// peaked at 41-47 threads, 32-40 of them workers of several threads). The
// 6: a fresh process's 4 (the main thread, sysmon, the loop's, a spare),
// the two inline callers', less what GOMAXPROCS already counts, come to
// GOMAXPROCS + 4 (what reads peak at); one more is the runtime's template
// thread, which locking the loop starts (and linking cgo: testify links
// package net, which does wherever a C compiler is installed, so this
// binary has it on AIO too); and one more is a spare the runtime starts at
// times when the loop's thread cannot take other work (locked, or blocked
// in an io_submit of an extending write on AIO). Measured (GOMAXPROCS=2,
// CGO_ENABLED=0): uring 11-14 threads, 4 of them workers; AIO 5-7. Each
// case runs in a process of its own, because a Go process never gives
// back a thread: what earlier tests started would count.
// DISKIO_WRITERS_DURATION (default 0.5s) sets how long the writers run; the
// issue's experiment is 5s.
func TestWriterThreadsBounded(t *testing.T) {
	if os.Getenv("DISKIO_WRITERS_CHILD") != "" {
		writersChild(t)
		return
	}
	d := 500 * time.Millisecond
	if s := os.Getenv("DISKIO_WRITERS_DURATION"); s != "" {
		var err error
		d, err = time.ParseDuration(s)
		require.NoError(t, err)
	}
	for _, b := range []Backend{URing, AIO} {
		for _, writers := range []int{64, 1000} {
			t.Run(fmt.Sprintf("%s/writers=%d", b, writers), func(t *testing.T) {
				cmd := exec.Command(os.Args[0], "-test.run=^TestWriterThreadsBounded$", "-test.v")
				cmd.Env = append(os.Environ(), fmt.Sprintf("DISKIO_WRITERS_CHILD=%s,%d,%s,%s", b, writers, d, t.TempDir()))
				out, err := cmd.CombinedOutput()
				for _, line := range strings.Split(string(out), "\n") {
					if strings.Contains(line, "writers_linux_test") {
						t.Log(strings.TrimSpace(line))
					}
				}
				if strings.Contains(string(out), "--- SKIP") {
					t.Skip("skipped in the child:\n" + string(out))
				}
				require.NoError(t, err, "child:\n%s", out)
			})
		}
	}
}

// writersChild is one case of TestWriterThreadsBounded, in its own process.
func writersChild(t *testing.T) {
	args := strings.Split(os.Getenv("DISKIO_WRITERS_CHILD"), ",")
	require.Len(t, args, 4)
	b := Backend(args[0])
	writers, err := strconv.Atoi(args[1])
	require.NoError(t, err)
	d, err := time.ParseDuration(args[2])
	require.NoError(t, err)
	dir := args[3]

	start := bench.Threads()
	s := newSched(t, b, Options{})
	// The kernel counts bounded and unbounded workers apart, and an
	// fsync or an extending write may take either kind (6.18 ran them as
	// unbounded), so the cap on the pool is both together.
	cap := int(s.Fixed().Workers.Max.Bounded + s.Fixed().Workers.Max.Unbounded)
	if b == URing {
		require.True(t, s.Fixed().Workers.Capped, s.Fixed().Workers.String())
	}
	// 64 KiB writes as in the experiment; 4 KiB with 1,000
	// writers, where draining what is in flight at the deadline through
	// the capped pool would otherwise take most of the test's time. Every
	// write extends its file either way.
	size := 64 << 10
	if writers > 64 {
		size = 4 << 10
	}
	files := make([]*os.File, writers)
	for i := range files {
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(i)), os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o600)
		if err != nil {
			testenv.Unavailable(t, "odirect", err)
		}
		defer f.Close()
		files[i] = f
	}
	buf := testenv.AlignedBuf(t, size)
	fill(buf, 1)

	m := bench.StartMeter()
	var writes atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for _, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fd := int(f.Fd())
			for i := 0; time.Now().Before(deadline); i++ {
				if _, err := s.WriteAt(fd, buf, int64(i*size)); err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
				if i%4 == 3 {
					if err := s.Fdatasync(fd); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	u := m.Stop()
	// Workers stay up for seconds after their last request, so every
	// pool that had workers during the run still has them now.
	pools := workerPools()
	limit := runtime.GOMAXPROCS(0) + 6 + cap
	t.Logf("%s, %d writers, %v: %d writes; %d threads at start, peak %d, %d of them io_uring workers, from %d submitting threads (limit %d: GOMAXPROCS %d + 6 + cap %d)",
		b, writers, d, writes.Load(), start, u.PeakThreads, u.PeakWorkers, pools, limit, runtime.GOMAXPROCS(0), cap)
	require.Positive(t, writes.Load())
	require.LessOrEqual(t, u.PeakWorkers, cap)
	require.LessOrEqual(t, u.PeakThreads, limit)
	require.LessOrEqual(t, pools, 1, "io_uring workers of more than one submitting thread")
}

// workerPools counts the threads whose io_uring worker pools have workers:
// the distinct tids in the workers' names (iou-wrk-<tid>).
func workerPools() int {
	ents, _ := os.ReadDir("/proc/self/task")
	owners := map[string]bool{}
	for _, e := range ents {
		comm, err := os.ReadFile("/proc/self/task/" + e.Name() + "/comm")
		if owner, ok := strings.CutPrefix(strings.TrimSpace(string(comm)), "iou-wrk-"); err == nil && ok {
			owners[owner] = true
		}
	}
	return len(owners)
}
