//go:build linux

package sched

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/testenv"
)

// slowLog collects slow-request reports with the time each arrived.
type slowLog struct {
	mu   sync.Mutex
	evs  []SlowIO
	at   []time.Duration
	zero time.Time
}

func (l *slowLog) add(ev SlowIO) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, ev)
	l.at = append(l.at, time.Since(l.zero))
}

// start makes now the time reports are timed from.
func (l *slowLog) start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.zero = time.Now()
}

func (l *slowLog) get() ([]SlowIO, []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]SlowIO(nil), l.evs...), append([]time.Duration(nil), l.at...)
}

// A request the device holds (an injected late completion) is reported
// within 1.5x the threshold, then again as its wait doubles, naming its
// fd, op, offset and length; the statistics show the stall while it lasts
// and its device time after.
func TestSlowRequestReported(t *testing.T) {
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			const threshold = 200 * time.Millisecond
			const stuck = 1700 * time.Millisecond // reports at 1x, 2x, 4x: 200, 400, 800ms... and 1600ms
			f := testenv.DirectFile(t)
			fd := int(f.Fd())
			log := &slowLog{}
			s := newSched(t, b, Options{
				SlowThreshold: threshold,
				OnSlow:        log.add,
				Faults: FaultFunc(func(a Attempt) Fault {
					if a.Op == OpRead && a.Off == 8*blockSize {
						return Fault{Delay: stuck}
					}
					return Fault{}
				}),
			})
			h, err := s.Open(fd, "stuck")
			require.NoError(t, err)
			require.NoError(t, h.SetClass(Latency))
			buf := testenv.AlignedBuf(t, 16*blockSize)
			_, err = h.WriteAt(buf, 0)
			require.NoError(t, err)

			log.zero = time.Now()
			done := make(chan error, 1)
			go func() {
				_, err := h.ReadAt(buf[:2*blockSize], 8*blockSize)
				done <- err
			}()
			// Healthy requests beside it are not reported.
			for i := range 8 {
				_, err := h.ReadAt(buf[8*blockSize:9*blockSize], int64(i)*blockSize)
				require.NoError(t, err)
			}
			var st Stats
			require.Eventually(t, func() bool {
				s.ReadStats(&st)
				return st.Slow.Stalled == 1
			}, 3*threshold, time.Millisecond)
			require.EqualValues(t, 1, st.Slow.Requests)
			require.Equal(t, threshold, st.Slow.Threshold)
			require.Equal(t, 1, st.InFlight[Latency])
			require.NoError(t, <-done)
			elapsed := time.Since(log.zero)

			evs, at := log.get()
			t.Logf("reports at %v, request done after %v", at, elapsed)
			require.Len(t, evs, 4, "reports at 1x, 2x, 4x and 8x the threshold")
			for i, ev := range evs {
				require.Equal(t, SlowIO{Op: OpRead, Fd: int32(fd), Name: "stuck", Off: 8 * blockSize, Len: 2 * blockSize, Class: Latency, Waited: ev.Waited, Report: i + 1}, ev)
				due := threshold << i
				require.GreaterOrEqual(t, ev.Waited, due)
				require.GreaterOrEqual(t, at[i], due)
				require.LessOrEqual(t, at[i], due+threshold/2, "report %d came %v after the request started, due at %v", i+1, at[i], due)
			}
			s.ReadStats(&st)
			require.Zero(t, st.Slow.Stalled)
			require.EqualValues(t, 1, st.Slow.Requests)
			require.EqualValues(t, 4, st.Slow.Reports)
			require.Zero(t, st.Slow.Dropped)
			require.GreaterOrEqual(t, st.Slow.Longest, 8*threshold)
			require.GreaterOrEqual(t, st.Ops[OpRead][Latency].Device.Quantile(1), stuck)
		})
	}
}

// A healthy run reports nothing, and an idle loop sleeps without waking
// to check ages (no timeout while nothing is in flight).
func TestSlowNoneWhenHealthy(t *testing.T) {
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			log := &slowLog{zero: time.Now()}
			s := newSched(t, b, Options{SlowThreshold: 100 * time.Millisecond, OnSlow: log.add, NoInline: true})
			f := testenv.DirectFile(t)
			fd := int(f.Fd())
			buf := testenv.AlignedBuf(t, 32*blockSize)
			var wg sync.WaitGroup
			for g := range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := buf[g*blockSize : (g+1)*blockSize]
					for i := range 20 {
						off := int64(g*20+i) * blockSize
						_, err := s.WriteAt(fd, p, off)
						require.NoError(t, err)
						_, err = s.ReadAt(fd, p, off)
						require.NoError(t, err)
					}
				}()
			}
			wg.Wait()
			require.NoError(t, s.Fdatasync(fd))
			var before, after Stats
			s.ReadStats(&before)
			time.Sleep(500 * time.Millisecond)
			s.ReadStats(&after)
			evs, _ := log.get()
			require.Empty(t, evs)
			require.Zero(t, after.Slow.Requests)
			// Idle for 5 thresholds: at most the one sleep that began
			// after the last completion (plus one for a race with it).
			require.LessOrEqual(t, after.Sleeps-before.Sleeps, uint64(2))
		})
	}
}

// The real thing: a loop device throttled to 4 reads a second by the blkio
// cgroup (v1), 12 direct reads submitted at once. Those still waiting at
// the threshold are reported by then (within 1.5x), the statistics show
// them stalled, and every read completes. Needs root, a loop device and
// the blkio controller; skipped otherwise.
func TestSlowDiskThrottled(t *testing.T) {
	dev, throttle := throttledDevice(t)
	throttle("read", 4)

	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			const threshold = 500 * time.Millisecond
			log := &slowLog{}
			s := newSched(t, b, Options{SlowThreshold: threshold, OnSlow: log.add})
			f, err := os.OpenFile(dev, os.O_RDONLY|unix.O_DIRECT, 0)
			require.NoError(t, err)
			defer f.Close()
			fd := int(f.Fd())
			h := classed(t, s, fd, Background)
			const reads = 12 // 3 seconds at 4 a second
			buf := testenv.AlignedBuf(t, reads*blockSize)
			batch := s.Batch()
			calls := make([]Call, reads)
			log.zero = time.Now()
			for i := range calls {
				calls[i] = batch.StartFileReadAt(h, buf[i*blockSize:(i+1)*blockSize], int64(i)*64*blockSize)
			}
			batch.WaitAll()
			elapsed := time.Since(log.zero)
			for _, c := range calls {
				n, err := c.Wait()
				require.NoError(t, err)
				require.Equal(t, blockSize, n)
			}
			evs, at := log.get()
			t.Logf("%d reads in %v; %d reports, the first %d at %v", reads, elapsed, len(evs), countFirst(evs), at[:min(len(at), 4)])
			require.Greater(t, elapsed, 2*time.Second, "the throttle did not hold the reads")
			require.NotEmpty(t, evs)
			require.Equal(t, 1, evs[0].Report)
			require.Equal(t, Background, evs[0].Class)
			require.Equal(t, int32(fd), evs[0].Fd)
			require.GreaterOrEqual(t, at[0], threshold)
			require.LessOrEqual(t, at[0], threshold+threshold/2, "first report after %v", at[0])
			var sst Stats
			s.ReadStats(&sst)
			require.Positive(t, sst.Slow.Requests)
			require.Zero(t, sst.Slow.Stalled)
			require.GreaterOrEqual(t, sst.Slow.Longest, 2*threshold)
			require.GreaterOrEqual(t, sst.Ops[OpRead][Background].Device.Quantile(1), 2*time.Second)
		})
	}
}

// throttledDevice makes an 8 MiB loop device and puts the test process in
// a blkio cgroup (v1) of its own; throttle(rw, iops) limits the device's
// "read" or "write" requests a second. Needs root, losetup and the blkio
// controller; skips otherwise. Everything is undone at the end.
func throttledDevice(t *testing.T) (dev string, throttle func(rw string, iops int)) {
	const blkio = "/sys/fs/cgroup/blkio"
	if os.Geteuid() != 0 {
		t.Skip("needs root (losetup, cgroups)")
	}
	if _, err := os.Stat(filepath.Join(blkio, "blkio.throttle.read_iops_device")); err != nil {
		t.Skip("no cgroup v1 blkio controller:", err)
	}
	if _, err := exec.LookPath("losetup"); err != nil {
		t.Skip("no losetup")
	}
	img := filepath.Join(t.TempDir(), "slow.img")
	require.NoError(t, os.WriteFile(img, make([]byte, 8<<20), 0o600))
	out, err := exec.Command("losetup", "--find", "--show", "--direct-io=on", img).Output()
	if err != nil {
		t.Skip("losetup:", err)
	}
	dev = strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	var st unix.Stat_t
	require.NoError(t, unix.Stat(dev, &st))
	majmin := fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))

	cg := filepath.Join(blkio, fmt.Sprintf("diskio-slow-test-%d", os.Getpid()))
	require.NoError(t, os.Mkdir(cg, 0o755))
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(blkio, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
		os.Remove(cg)
	})
	require.NoError(t, os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0))
	return dev, func(rw string, iops int) {
		require.NoError(t, os.WriteFile(filepath.Join(cg, "blkio.throttle."+rw+"_iops_device"), []byte(fmt.Sprintf("%s %d", majmin, iops)), 0))
	}
}

// Requests on their callers' threads are watched as those in the kernel
// are: a read on the idle fast path, and a latency-class sync made while a
// read is in flight, each held by the throttled device past the threshold,
// are reported within 1.5x of it, as running on the caller.
func TestSlowOnCaller(t *testing.T) {
	dev, throttle := throttledDevice(t)
	throttle("read", 1)
	throttle("write", 1)
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			const threshold = 300 * time.Millisecond
			log := &slowLog{}
			s := newSched(t, b, Options{SlowThreshold: threshold, OnSlow: log.add})
			f, err := os.OpenFile(dev, os.O_RDWR|unix.O_DIRECT, 0)
			require.NoError(t, err)
			defer f.Close()
			fd := int(f.Fd())
			buf := testenv.AlignedBuf(t, 2*blockSize)

			// The idle fast path: nothing else in flight. The first
			// reads may pass on the throttle's initial budget.
			var took time.Duration
			for i := 0; i < 4 && took < threshold; i++ {
				var before, after Stats
				s.ReadStats(&before)
				log.start()
				t0 := time.Now()
				n, err := s.ReadAt(fd, buf[:blockSize], int64(i)*64*blockSize)
				took = time.Since(t0)
				require.NoError(t, err)
				require.Equal(t, blockSize, n)
				s.ReadStats(&after)
				require.Equal(t, before.Inline+1, after.Inline, "the read did not run on its caller")
			}
			require.GreaterOrEqual(t, took, threshold, "the throttle did not hold a read")
			evs, at := log.get()
			require.NotEmpty(t, evs, "a read of %v on its caller was not reported", took)
			ev := evs[len(evs)-1]
			require.Equal(t, OpRead, ev.Op)
			require.Equal(t, int32(fd), ev.Fd)
			require.Equal(t, blockSize, ev.Len)
			t.Logf("a read on its caller took %v, first reported at %v", took, at[len(at)-countLast(evs)])
			require.GreaterOrEqual(t, at[len(at)-countLast(evs)], threshold)
			require.LessOrEqual(t, at[len(at)-countLast(evs)], threshold+threshold/2)

			// A latency-class sync beside a read in the kernel: dirty a
			// page of the device through a buffered descriptor, and
			// flush it past the write throttle.
			bf, err := os.OpenFile(dev, os.O_RDWR, 0)
			require.NoError(t, err)
			defer bf.Close()
			bfd := int(bf.Fd())
			h := classed(t, s, bfd, Latency)
			for i := 0; i < 4; i++ {
				_, err = bf.WriteAt(buf[:blockSize], int64(100+i)*blockSize)
				require.NoError(t, err)
				read := s.StartReadAt(fd, buf[blockSize:], int64(40+i)*64*blockSize)
				var before, after Stats
				s.ReadStats(&before)
				log.start()
				t0 := time.Now()
				require.NoError(t, h.Fdatasync())
				took = time.Since(t0)
				s.ReadStats(&after)
				_, err = read.Wait()
				require.NoError(t, err)
				require.Equal(t, before.Inline+1, after.Inline, "the sync did not run on its caller")
				if took >= threshold {
					break
				}
			}
			require.GreaterOrEqual(t, took, threshold, "the throttle did not hold a sync")
			evs, at = log.get()
			require.NotEmpty(t, evs)
			ev = evs[len(evs)-1]
			require.Equal(t, OpFdatasync, ev.Op)
			require.Equal(t, Latency, ev.Class)
			require.Equal(t, int32(bfd), ev.Fd)
			first := at[len(at)-countLast(evs)]
			t.Logf("a latency sync on its caller beside a read took %v, first reported at %v", took, first)
			require.GreaterOrEqual(t, first, threshold)
			require.LessOrEqual(t, first, threshold+threshold/2)
			var sst Stats
			s.ReadStats(&sst)
			require.Zero(t, sst.Slow.Stalled)
		})
	}
}

// countLast is how many reports the last request reported has in evs (its
// reports are the last ones: one request at a time).
func countLast(evs []SlowIO) int {
	n := 0
	for i := len(evs) - 1; i >= 0 && evs[i].Op == evs[len(evs)-1].Op && evs[i].Fd == evs[len(evs)-1].Fd; i-- {
		n++
		if evs[i].Report == 1 {
			break
		}
	}
	return n
}

func countFirst(evs []SlowIO) int {
	n := 0
	for _, ev := range evs {
		if ev.Report == 1 {
			n++
		}
	}
	return n
}
