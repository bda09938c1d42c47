//go:build linux

package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/testenv"
)

// With a request in the kernel that does not complete (a read of an empty
// pipe, which io_uring parks on the pipe's poll queue, no worker), the
// loop sleeps in the kernel after a short spin: the process spends no CPU
// while it waits. A request pushed while the loop sleeps there wakes it
// (the eventfd handshake) and is served before the pipe read completes;
// the pipe read then completes with its data. io_uring only: Linux AIO
// reads a pipe synchronously inside io_submit.
func TestSleepsWithRequestsInFlight(t *testing.T) {
	s := newSched(t, URing, Options{NoInline: true})
	var pfd [2]int
	require.NoError(t, unix.Pipe2(pfd[:], unix.O_CLOEXEC))
	t.Cleanup(func() { unix.Close(pfd[0]); unix.Close(pfd[1]) })
	f := testenv.DirectFile(t)
	buf := testenv.AlignedBuf(t, blockSize)

	pipeBuf := make([]byte, 8)
	slow := s.StartReadAt(pfd[0], pipeBuf, 0)
	waitSleeping := func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !s.sleeping.Load() {
			require.False(t, time.Now().After(deadline), "the loop never slept with a request in flight")
			time.Sleep(time.Millisecond)
		}
	}
	waitSleeping()
	require.False(t, slow.Ready(), "an empty pipe's read completed")

	// Asleep with the read in the kernel: no CPU.
	const window = 300 * time.Millisecond
	var r0, r1 unix.Rusage
	require.NoError(t, unix.Getrusage(unix.RUSAGE_SELF, &r0))
	time.Sleep(window)
	require.NoError(t, unix.Getrusage(unix.RUSAGE_SELF, &r1))
	used := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
	t.Logf("CPU over %v with a request in flight: %v", window, used)
	require.Less(t, used, window/50, "the loop used %v of CPU in %v with a request in flight", used, window)

	// Requests arriving while it sleeps there are served, each time.
	for i := 0; i < 20; i++ {
		waitSleeping()
		done := make(chan error, 1)
		go func() {
			_, err := s.WriteAt(int(f.Fd()), buf, int64(i)*blockSize)
			done <- err
		}()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("a write pushed while the loop slept with a read in flight was not served: lost wake-up")
		}
		require.False(t, slow.Ready(), "the pipe's read completed without data")
	}

	_, err := unix.Write(pfd[1], []byte("complete"))
	require.NoError(t, err)
	n, err := slow.Wait()
	require.NoError(t, err)
	require.Equal(t, "complete", string(pipeBuf[:n]))
}
