//go:build linux

package bench

import (
	"runtime"
	"testing"

	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/uring"
)

// A request forced onto io_uring's worker pool (IOSQE_ASYNC) starts an
// iou-wrk thread, which the meter counts apart and in the total.
func TestMeterSeesIOWorkers(t *testing.T) {
	runtime.LockOSThread() // the workers are this thread's
	defer runtime.UnlockOSThread()
	r, err := uring.Setup(8, nil)
	if err != nil {
		testenv.Unavailable(t, "uring", err)
	}
	defer r.Close()
	m := StartMeter()
	sqe := r.GetSQE()
	sqe.PrepNop()
	sqe.Flags |= uring.IOSQE_ASYNC
	if _, err := r.SubmitAndWait(1); err != nil {
		t.Fatal(err)
	}
	// Workers linger for seconds after their work: this one is still up.
	n := IOWorkers()
	u := m.Stop()
	if n < 1 || u.PeakWorkers < 1 {
		t.Fatalf("io_uring workers: %d now, meter's peak %d; want at least 1", n, u.PeakWorkers)
	}
	if u.PeakThreads <= u.PeakWorkers {
		t.Fatalf("peak threads %d do not include the %d workers and this thread", u.PeakThreads, u.PeakWorkers)
	}
}
