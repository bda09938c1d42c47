//go:build linux

package diskio

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
	"github.com/diskio-go/diskio/sched"
)

// TestWritersThreadsBounded: 64 goroutines, each extending its own File
// with 64 KiB writes and a Datasync every fourth write, hold few OS
// threads, counted for the whole process (io_uring's workers included):
//
//   - page cache (the default): GOMAXPROCS + 4 + the worker cap. The
//     syncs run on their callers' threads, at most the cap at a time
//     (the caller slots the idle fast path uses are not theirs too), which
//     the test checks exactly, from /proc; the writes are copies into
//     the page cache. On a starved CPU (other packages' tests beside
//     this one) the runtime starts more (see limit below).
//   - Direct: 2 more. The writes extend their files, so io_uring hands
//     them to its workers (the cap); the writes and syncs made on callers
//     before the first of them reached the ring (the idle fast path, the
//     caller slots for blocking work) started threads of their own, and a Go
//     process never gives a thread back.
//
// One more where the binary links cgo (-race does), whose template thread
// starts at init. Each mode runs in a process of its own, since a Go
// process keeps every thread it ever started. Before syncs stopped taking
// the idle fast path's caller slots too, page cache peaked at 13-14.
func TestWritersThreadsBounded(t *testing.T) {
	if spec := os.Getenv("DISKIO_FILE_WRITERS_CHILD"); spec != "" {
		filesWritersChild(t, spec)
		return
	}
	for _, mode := range []string{"pagecache", "direct"} {
		t.Run(mode, func(t *testing.T) {
			// A starved CPU (other packages' tests beside this one)
			// keeps a thread in a short system call long enough for
			// the runtime to hand its P to a new thread: such a thread
			// is the machine's, not the library's. Up to three runs,
			// each in a new process: one within the bound passes.
			var out []byte
			var err error
			for range 3 {
				cmd := exec.Command(os.Args[0], "-test.run=^TestWritersThreadsBounded$", "-test.v")
				cmd.Env = append(os.Environ(), "DISKIO_FILE_WRITERS_CHILD="+mode+","+t.TempDir())
				out, err = cmd.CombinedOutput()
				for _, line := range strings.Split(string(out), "\n") {
					if strings.Contains(line, "writers_threads_test") && strings.Contains(line, "writers, ") {
						t.Log(strings.TrimSpace(line))
					}
				}
				if strings.Contains(string(out), "--- SKIP") {
					t.Skip("skipped in the child:\n" + string(out))
				}
				if err == nil {
					return
				}
			}
			require.NoError(t, err, "child:\n%s", out)
		})
	}
}

func filesWritersChild(t *testing.T, spec string) {
	mode, dir, _ := strings.Cut(spec, ",")
	const writers, size = 64, 64 << 10
	d := time.Second
	opts := []Option{}
	if mode == "direct" {
		opts = append(opts, WithDirect(DirectRequired))
	}
	files := make([]*File, writers)
	for i := range files {
		f, err := OpenFile(filepath.Join(dir, strconv.Itoa(i)), os.O_RDWR|os.O_CREATE, 0o600, opts...)
		if err != nil && mode == "direct" {
			t.Skipf("O_DIRECT files in %s: %v", dir, err)
		}
		require.NoError(t, err)
		defer f.Close()
		files[i] = f
	}
	s := files[0].sched()
	ws := s.Fixed().Workers
	if s.Backend() != sched.URing || !ws.Capped {
		t.Skipf("io_uring with its workers capped is what this bounds (backend %s, workers %v)", s.Backend(), ws)
	}
	buf := make([]byte, size)
	m := bench.StartMeter()
	stop, syncing := watchSyncing()
	var writes atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for _, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				if _, err := f.WriteAt(buf, int64(i*size)); err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
				if i%4 == 3 {
					if err := f.Datasync(); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	u := m.Stop()
	close(stop)
	inSync := <-syncing
	procs, workerCap := runtime.GOMAXPROCS(0), int(ws.Max.Bounded)
	quiet := procs + 4 + workerCap
	if mode == "direct" {
		quiet += 2
	}
	if testenv.CgoLinked() {
		quiet++
	}
	// On a starved CPU (other packages' tests beside this one) the
	// runtime hands the Ps of threads in short system calls to new
	// threads: 12-15 were seen in page-cache mode. What the library
	// bounds is checked exactly above (the syncs at once); the
	// process's count is held to the bound of io_uring's whole pool
	// (bounded and unbounded workers), which a starved machine stays
	// within too.
	limit := procs + 4 + int(ws.Max.Bounded+ws.Max.Unbounded)
	if testenv.CgoLinked() {
		limit++
	}
	t.Logf("%s, %d writers, %v: %d writes; peak %d threads (%d at once in fsync or fdatasync), %d of them io_uring workers; bound %d on a quiet machine, %d (GOMAXPROCS %d, worker cap %d, cgo %v)",
		mode, writers, d, writes.Load(), u.PeakThreads, inSync, u.PeakWorkers, quiet, limit, procs, workerCap, testenv.CgoLinked())
	require.Positive(t, writes.Load())
	require.LessOrEqual(t, u.PeakWorkers, workerCap)
	require.LessOrEqual(t, inSync, workerCap, "%s: more syncs on callers' threads at once than the worker cap", mode)
	require.LessOrEqual(t, u.PeakThreads, limit, fmt.Sprintf("%s: more threads than the bound", mode))
}

// watchSyncing samples the process's threads until stop is closed, and
// then sends the most it saw at once in fsync or fdatasync.
func watchSyncing() (stop chan struct{}, peak chan int) {
	stop, peak = make(chan struct{}), make(chan int, 1)
	go func() {
		most := 0
		for {
			select {
			case <-stop:
				peak <- most
				return
			default:
			}
			// Threads seen in a sync by the scan and still in one
			// when read again after it were all in one at once (at
			// the first of the second reads), which the scan alone,
			// reading one thread after another, does not show.
			var seen []string
			for _, tid := range bench.Tasks() {
				if inSync(tid) {
					seen = append(seen, tid)
				}
			}
			n := 0
			for _, tid := range seen {
				if inSync(tid) {
					n++
				}
			}
			most = max(most, n)
			time.Sleep(100 * time.Microsecond)
		}
	}()
	return stop, peak
}

// inSync reports whether thread tid is in fsync or fdatasync.
func inSync(tid string) bool {
	b, err := os.ReadFile("/proc/self/task/" + tid + "/syscall")
	if err != nil {
		return false
	}
	nr, _, _ := strings.Cut(string(b), " ")
	return nr == strconv.Itoa(unix.SYS_FSYNC) || nr == strconv.Itoa(unix.SYS_FDATASYNC)
}
