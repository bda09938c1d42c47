//go:build linux

package uring

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/testenv"
)

// iouWorkers counts the io-wq workers of the thread tid: the kernel names
// them iou-wrk-<tid of the submitting thread>.
func iouWorkers(tid int) int {
	ents, _ := os.ReadDir("/proc/self/task")
	want := "iou-wrk-" + strconv.Itoa(tid)
	n := 0
	for _, e := range ents {
		comm, err := os.ReadFile("/proc/self/task/" + e.Name() + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == want {
			n++
		}
	}
	return n
}

// burst forces n writes and fsyncs, each on its own file, onto the calling
// thread's io-wq (IOSQE_ASYNC) and returns the most workers of that pool
// seen while they ran.
func burst(t *testing.T, r *Ring, files []*os.File, buf []byte) int {
	t.Helper()
	tid := unix.Gettid()
	for i, f := range files {
		sqe := r.GetSQE()
		sqe.PrepWrite(int(f.Fd()), buf, 0)
		sqe.Flags |= IOSQE_ASYNC | IOSQE_IO_LINK
		sqe.UserData = uint64(2 * i)
		sqe = r.GetSQE()
		sqe.PrepFsync(int(f.Fd()), 0)
		sqe.Flags |= IOSQE_ASYNC
		sqe.UserData = uint64(2*i + 1)
	}
	_, err := r.Submit()
	require.NoError(t, err)
	var peak atomic.Int32
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n := int32(iouWorkers(tid)); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	cqes := make([]CQE, 2*len(files))
	for got := 0; got < 2*len(files); {
		_, err := r.SubmitAndWait(1)
		require.NoError(t, err)
		n, err := r.ReapCQEs(cqes)
		require.NoError(t, err)
		for _, c := range cqes[:n] {
			require.NoError(t, c.Err(), "request %d", c.UserData)
		}
		got += n
	}
	close(stop)
	<-sampled
	return max(int(peak.Load()), iouWorkers(tid))
}

// The cap holds for the submitting thread's pool and reads back as set;
// the same burst on a thread without it starts more workers, so the check
// can fail.
func TestRegisterIOWQMaxWorkers(t *testing.T) {
	dir := t.TempDir()
	files := make([]*os.File, 16)
	for i := range files {
		f, err := os.Create(filepath.Join(dir, strconv.Itoa(i)))
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		files[i] = f
	}
	buf := make([]byte, 4<<20)

	// Workers belong to the submitting thread: each ring here is used
	// from one locked thread, the uncapped one on another goroutine's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	uncapped := make(chan int, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		n := -1
		defer func() { uncapped <- n }() // also when burst fails the test
		r, err := Setup(64, nil)
		if err != nil {
			return
		}
		defer r.Close()
		n = burst(t, r, files, buf)
	}()
	free := <-uncapped
	if t.Failed() {
		t.FailNow()
	}
	if free < 0 {
		testenv.Unavailable(t, "uring", errors.New("io_uring_setup failed"))
	}

	r := newRing(t, 64, nil)
	// A first submission gives this thread its io_uring context and
	// pool, so the limits below are read back from it.
	r.GetSQE().PrepNop()
	waitCQEs(t, r, 1)
	def, err := r.RegisterIOWQMaxWorkers(MaxWorkers{Bounded: 2, Unbounded: 2})
	if errors.Is(err, unix.EINVAL) {
		t.Skip("IORING_REGISTER_IOWQ_MAX_WORKERS needs Linux 5.15")
	}
	require.NoError(t, err)
	require.NotZero(t, def.Bounded, "the kernel's default")
	got, err := r.RegisterIOWQMaxWorkers(MaxWorkers{})
	require.NoError(t, err)
	require.Equal(t, MaxWorkers{Bounded: 2, Unbounded: 2}, got)

	capped := burst(t, r, files, buf)
	t.Logf("workers of one thread: %d with the default limits (%+v), %d with a cap of 2", free, def, capped)
	require.LessOrEqual(t, capped, 2)
	if free <= 2 {
		t.Log("the burst did not need more than 2 workers: the cap was not put to the test")
	}
}
