//go:build linux

package sched

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// sharedFlushDir returns a directory whose filesystem has a shared flush
// (ext4, Linux 5.8+), or skips.
func sharedFlushDir(t *testing.T) string {
	t.Helper()
	if !syncfsReportsErrors() {
		t.Skip("the shared flush needs Linux 5.8 (syncfs reporting writeback errors)")
	}
	dir := t.TempDir()
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &st))
	if !syncfsDurable(st.Type) {
		t.Skipf("the shared flush needs ext4 for t.TempDir() (f_type %#x)", st.Type)
	}
	return dir
}

// slowOwnFlushes delays every sync made as its own system call (not the
// shared flush's syncfs) by d, so that the scheduler's own syncs stay
// under way while others arrive; with fail, the shared flush's syncfs
// fails with it.
type slowOwnFlushes struct {
	d    time.Duration
	fail unix.Errno
	mu   sync.Mutex
	fds  map[int32]int // syncfs attempts by descriptor
}

func (s *slowOwnFlushes) Fault(a Attempt) Fault {
	switch {
	case a.Path == PathFlush:
		s.mu.Lock()
		s.fds[a.Fd]++
		s.mu.Unlock()
		// Long enough for the others to gather behind it.
		return Fault{Errno: s.fail, Delay: s.d / 5}
	case a.Op == OpFsync || a.Op == OpFdatasync:
		return Fault{Delay: s.d}
	}
	return Fault{}
}

// manyFileSyncs opens n files in dir through s, and has a goroutine per
// file write 4 KiB to its file and Fsync it, rounds times; it returns
// every Fsync's error, by file.
func manyFileSyncs(t *testing.T, s *Scheduler, dir string, n, rounds int) [][]error {
	t.Helper()
	files := make([]*File, n)
	for i := range files {
		osf, err := os.OpenFile(filepath.Join(dir, fmt.Sprint(i)), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		t.Cleanup(func() { osf.Close() })
		f, err := s.Open(int(osf.Fd()), osf.Name())
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		files[i] = f
	}
	errs := make([][]error, n)
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for k := range rounds {
				buf[0] = byte(k)
				if _, err := f.WriteAt(buf, int64(k)*4096); err != nil {
					errs[i] = append(errs[i], err)
					continue
				}
				errs[i] = append(errs[i], f.Fsync())
			}
		}()
	}
	wg.Wait()
	return errs
}

// requireClean checks that the n files in dir have no page dirty or under
// writeback: what their syncs covered was written.
func requireClean(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		osf, err := os.Open(filepath.Join(dir, fmt.Sprint(i)))
		require.NoError(t, err)
		var cs unix.Cachestat_t
		err = sys.Cachestat(int(osf.Fd()), &unix.CachestatRange{}, &cs)
		osf.Close()
		if err == unix.ENOSYS {
			t.Log("no cachestat (Linux 6.5): dirty pages not checked")
			return
		}
		require.NoError(t, err)
		require.Zero(t, cs.Dirty+cs.Writeback, "file %d: pages dirty or under writeback after its Fsync", i)
	}
}

// TestSharedFlushServesManyFiles: with the scheduler's own syncs all
// under way, the syncs of 64 other files are served by a few syncfs
// calls, each serving many, on every backend; they all succeed.
func TestSharedFlushServesManyFiles(t *testing.T) {
	dir := sharedFlushDir(t)
	for _, b := range faultBackends {
		t.Run(string(b), func(t *testing.T) {
			inj := &slowOwnFlushes{d: 100 * time.Millisecond, fds: map[int32]int{}}
			s := newSched(t, b, Options{Faults: inj})
			sub := filepath.Join(dir, string(b))
			require.NoError(t, os.Mkdir(sub, 0o755))
			const n = 64
			errs := manyFileSyncs(t, s, sub, n, 2)
			for i := range errs {
				for _, err := range errs[i] {
					require.NoError(t, err, "file %d", i)
				}
			}
			requireClean(t, sub, n)
			st := s.FlushStats()
			t.Logf("%d syncfs served %d of %d syncs", st.Syncfs, st.Served, 2*n)
			// At most ownFlushes syncs at a time are their own, each
			// held 100 ms: the rest of the first round waits behind
			// them, and joins shared flushes instead.
			require.GreaterOrEqual(t, st.Served, uint64(n))
			require.Less(t, st.Syncfs*4, st.Served, "each syncfs serves many syncs")
			var stats Stats
			s.ReadStats(&stats)
			got := uint64(0)
			for c := range NumClasses {
				got += stats.Ops[OpFsync][c].Device.Count()
			}
			require.Equal(t, uint64(2*n), got, "every Fsync is a request in the statistics")
		})
	}
}

// TestSharedFlushFailureReachesEveryWaiter: a failed syncfs fails the
// sync of every File it served, not only its leader's; the syncs made as
// their own system calls succeed.
func TestSharedFlushFailureReachesEveryWaiter(t *testing.T) {
	dir := sharedFlushDir(t)
	for _, b := range faultBackends {
		t.Run(string(b), func(t *testing.T) {
			inj := &slowOwnFlushes{d: 100 * time.Millisecond, fail: unix.EIO, fds: map[int32]int{}}
			s := newSched(t, b, Options{Faults: inj})
			sub := filepath.Join(dir, string(b))
			require.NoError(t, os.Mkdir(sub, 0o755))
			const n = 64
			errs := manyFileSyncs(t, s, sub, n, 1)
			failed := 0
			for i := range errs {
				for _, err := range errs[i] {
					if err != nil {
						require.ErrorIs(t, err, unix.EIO, "file %d", i)
						failed++
					}
				}
			}
			st := s.FlushStats()
			t.Logf("%d syncfs failed %d syncs; %d own", st.Syncfs, failed, n-failed)
			require.Equal(t, st.Served, uint64(failed), "every sync a failed syncfs served failed")
			require.Less(t, int(st.Syncfs), failed, "a syncfs's failure reaches more than its leader")
			require.GreaterOrEqual(t, failed, n-int(s.ownFlushes()))
			inj.mu.Lock()
			leaders := len(inj.fds)
			inj.mu.Unlock()
			require.Less(t, leaders, failed, "files whose descriptor made no syncfs failed too")
		})
	}
}

func TestKernelAtLeast(t *testing.T) {
	for _, c := range []struct {
		release string
		want    bool
	}{
		{"6.18.44-fc-v1045", true}, {"5.8.0", true}, {"5.8", true}, {"5.7.19-x", false},
		{"4.19.0", false}, {"5.10rc1", true}, {"junk", false}, {"", false},
	} {
		require.Equal(t, c.want, kernelAtLeast(c.release, 5, 8), c.release)
	}
}
