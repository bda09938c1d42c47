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
// included), stays within GOMAXPROCS + 4 + the worker cap on io_uring,
// with 64 and with 1,000 writers, and io_uring's workers are those of one
// submitting thread (before the loop locked itself, 64 writers peaked at
// 41-47 threads, 32-40 of them workers of several threads).
//
// The cap is the pool's as the kernel accepted it, bounded and unbounded
// together (4 + 4 by default); the workers themselves must stay within
// the bounded count, as io-wq runs all work on regular files on bounded
// workers (with 1 bounded and 6 unbounded allowed, one worker ran). The
// other threads are the Go runtime's, and the package doc says which
// (perf record -e syscalls:sys_enter_clone -g shows why each was
// started): GOMAXPROCS + 4 to 6 of them on io_uring, where locking the
// loop started the template thread. On AIO, which has no pool (cap 0),
// the process peaks at GOMAXPROCS + 3 to 5: its loop's thread sleeps in
// io_getevents or blocks in io_submit on an extending write, up to two
// inline callers in pwrite or fdatasync, and sysmon hands a P stuck in
// one of those calls to a new thread if no idle one is left, so the limit
// there is GOMAXPROCS + 5 (one more in a binary that links cgo, whose
// template thread starts at init). Each case runs in a process of its own,
// because a Go process never gives back a thread: what earlier tests
// started would count. The log names what every thread is doing at the
// end (census). DISKIO_WRITERS_DURATION (default 0.5s) sets how long the
// writers run; the experiment is 5s.
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
	ws := s.Fixed().Workers
	cap := int(ws.Max.Bounded + ws.Max.Unbounded)
	if b == URing {
		require.True(t, ws.Capped, ws.String())
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
	// Threads other than workers never exit (a Go process keeps its
	// Ms), so their count now is their peak; counted before anything
	// else the test does can start one.
	others := len(bench.Tasks()) - bench.IOWorkers()
	// Workers stay up for seconds after their last request, so every
	// pool that had workers during the run still has them now.
	pools := workerPools()
	procs := runtime.GOMAXPROCS(0)
	limit := procs + 4 + cap
	if b == AIO {
		limit = procs + 5
		// A binary linking cgo starts the template thread at init
		// (testify links package net, which does wherever a C compiler
		// is installed; -race needs it); on io_uring the lock would
		// have started it anyway.
		if testenv.CgoLinked() {
			limit++
		}
	}
	t.Logf("%s, %d writers, %v: %d writes; %d threads at start, peak %d, %d of them io_uring workers (at most %d bounded), from %d submitting threads, %d others; limit %d (GOMAXPROCS %d, cap %d); at the end: %v",
		b, writers, d, writes.Load(), start, u.PeakThreads, u.PeakWorkers, ws.Max.Bounded, pools, others, limit, procs, cap, takeCensus())
	require.Positive(t, writes.Load())
	require.LessOrEqual(t, u.PeakWorkers, int(ws.Max.Bounded), "io_uring workers beyond the bounded cap")
	require.LessOrEqual(t, u.PeakThreads, limit)
	require.LessOrEqual(t, pools, 1, "io_uring workers of more than one submitting thread")
}

// workerPools counts the threads whose io_uring worker pools have workers:
// the distinct tids in the workers' names (iou-wrk-<tid>).
func workerPools() int {
	owners := map[string]bool{}
	for _, tid := range bench.Tasks() {
		comm, err := os.ReadFile("/proc/self/task/" + tid + "/comm")
		if owner, ok := strings.CutPrefix(strings.TrimSpace(string(comm)), "iou-wrk-"); err == nil && ok {
			owners[owner] = true
		}
	}
	return len(owners)
}
