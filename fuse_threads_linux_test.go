//go:build linux

package diskio

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

// fuseReaders is how many goroutines TestFUSEColdReadThreads starts, each
// reading 4 KiB of its own, at once.
const fuseReaders = 2000

// fuseStride is how far apart their reads are: past the kernel's
// read-ahead of the FUSE file and of its daemon's backing file.
const fuseStride = 256 << 10

// TestFUSEColdReadThreads: 2,000 goroutines each reading 4 KiB of a cold
// file on FUSE (bindfs over a directory of the test's) hold few OS
// threads through diskio, in both modes: at most GOMAXPROCS + 4 + io_uring's
// worker cap (one more where cgo is linked), the README's bound plus the
// workers, which take FUSE's reads where they cannot complete at once.
// os.File, for comparison, blocks a thread in each read the daemon has not
// answered (logged; the test skips where os.File's threads did not grow
// past the bound, a FUSE too fast to show the difference). Each side runs
// in a process of its own (a Go process keeps every thread it started).
func TestFUSEColdReadThreads(t *testing.T) {
	if spec := os.Getenv("DISKIO_FUSE_THREADS_CHILD"); spec != "" {
		fuseThreadsChild(t, spec)
		return
	}
	testenv.SkipIfRefused(t, "uring", "the bound with io_uring's workers capped")
	dir := testenv.Mount(t, testenv.FUSE)
	src := testenv.BindfsSource(dir)
	size := int64(fuseReaders) * fuseStride
	f, err := os.Create(filepath.Join(src, "data"))
	require.NoError(t, err)
	block := randomBytes(4096, 9)
	for i := range fuseReaders {
		_, err := f.WriteAt(block, int64(i)*fuseStride)
		require.NoError(t, err)
	}
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())

	peaks := map[string]int{}
	for _, side := range []string{"os", "pagecache", "direct"} {
		// Cold: out of the page cache, the backing file's and the FUSE
		// file's.
		evict(t, filepath.Join(src, "data"))
		evict(t, filepath.Join(dir, "data"))
		cmd := exec.Command(os.Args[0], "-test.run=^TestFUSEColdReadThreads$", "-test.v")
		cmd.Env = append(os.Environ(), "DISKIO_FUSE_THREADS_CHILD="+side+","+filepath.Join(dir, "data"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child %s:\n%s", side, out)
		for _, line := range strings.Split(string(out), "\n") {
			if _, rest, ok := strings.Cut(line, "fuse threads: "); ok {
				t.Logf("%s: %s", side, rest)
				n, _, _ := strings.Cut(rest, " ")
				peaks[side], err = strconv.Atoi(n)
				require.NoError(t, err, "%q", line)
			}
		}
		require.Contains(t, peaks, side, "child %s said nothing:\n%s", side, out)
	}
	bound := fuseThreadBound()
	for _, side := range []string{"pagecache", "direct"} {
		require.LessOrEqual(t, peaks[side], bound, "%s: more threads than the bound", side)
	}
	if peaks["os"] <= bound {
		t.Skipf("os.File peaked at %d threads, within the bound %d: this FUSE answers too fast to tell the two apart", peaks["os"], bound)
	}
}

// fuseThreadBound is GOMAXPROCS + 4 + io_uring's worker cap, plus one
// where cgo is linked (the template thread).
func fuseThreadBound() int {
	n := runtime.GOMAXPROCS(0) + 4 + 4
	if testenv.CgoLinked() {
		n++
	}
	return n
}

// fuseThreadsChild reads the file fuseReaders times at once, through
// os.File or a File of the given mode, and prints its peak threads.
func fuseThreadsChild(t *testing.T, spec string) {
	side, path, _ := strings.Cut(spec, ",")
	var r interface {
		ReadAt([]byte, int64) (int, error)
		Close() error
	}
	var s *sched.Scheduler
	switch side {
	case "os":
		f, err := os.Open(path)
		require.NoError(t, err)
		require.NoError(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM))
		r = f
	default:
		mode := PageCache
		if side == "direct" {
			mode = Direct
		}
		f, err := OpenFile(path, os.O_RDONLY, 0, WithDirect(mode))
		require.NoError(t, err)
		require.False(t, f.plain())
		require.Equal(t, mode == Direct, f.Direct())
		require.NoError(t, f.Advise(0, 0, AdviceRandom))
		s = f.sched()
		if ws := s.Fixed().Workers; s.Backend() != sched.URing || !ws.Capped || ws.Max.Bounded != 4 {
			t.Skipf("io_uring with its workers capped at 4 is what this bounds (backend %s, workers %v)", s.Backend(), ws)
		}
		r = f
	}
	defer r.Close()
	want := randomBytes(4096, 9)
	order := rand.Perm(fuseReaders)
	m := bench.StartMeter()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, i := range order {
		wg.Go(func() {
			b := make([]byte, 4096)
			<-start
			n, err := r.ReadAt(b, int64(i)*fuseStride)
			if err != nil || n != len(b) || string(b) != string(want) {
				t.Errorf("read %d: %d bytes, %v", i, n, err)
			}
		})
	}
	close(start)
	wg.Wait()
	u := m.Stop()
	reqs := ""
	if s != nil {
		st := s.Stats()
		r := st.Total(sched.OpRead)
		reqs = ", " + strconv.FormatUint(r.Requests(), 10) + " reads through the scheduler (" + strconv.FormatUint(st.Inline, 10) + " on callers)"
	}
	t.Logf("fuse threads: %d peak (%d of them io_uring workers; bound %d); %d reads of 4 KiB in %v%s",
		u.PeakThreads, u.PeakWorkers, fuseThreadBound(), fuseReaders, u.Elapsed.Round(100_000), reqs)
}
