//go:build linux

package aio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/mem"
)

// The random-read benchmark needs a file of at least 1 GiB with real data.
// It is created once per test binary under os.TempDir() (reused if a
// previous, interrupted run left a valid one) and removed by TestMain.
const bigFileSize = 1 << 30

var bigFile struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigFile.path != "" {
		os.Remove(bigFile.path)
	}
	os.Exit(code)
}

// benchFile returns the path of the 1 GiB file; every 4 KiB block of it
// starts with its own offset (little endian) followed by random bytes.
func benchFile(b *testing.B) string {
	bigFile.once.Do(func() {
		path := filepath.Join(os.TempDir(), "diskio-aio-bench-1GiB")
		if !bigFileValid(path) {
			bigFile.err = writeBigFile(path)
		}
		bigFile.path = path
	})
	if errors.Is(bigFile.err, unix.EINVAL) {
		b.Skipf("O_DIRECT not supported in %s (set TMPDIR to a disk file system): %v", os.TempDir(), bigFile.err)
	}
	require.NoError(b, bigFile.err)
	return bigFile.path
}

func bigFileValid(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() != bigFileSize {
		return false
	}
	var stamp [8]byte
	for _, off := range []int64{0, blk, bigFileSize / 3 &^ (blk - 1), bigFileSize - blk} {
		if _, err := f.ReadAt(stamp[:], off); err != nil || binary.LittleEndian.Uint64(stamp[:]) != uint64(off) {
			return false
		}
	}
	return true
}

func writeBigFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|unix.O_DIRECT, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	// Reserve the extents first, as a durable writer would.
	if err := unix.Fallocate(int(f.Fd()), 0, 0, bigFileSize); err != nil {
		return fmt.Errorf("fallocate: %w", err)
	}
	buf, err := mem.Map(4 << 20)
	if err != nil {
		return err
	}
	defer mem.Unmap(buf)
	fill(buf, 42)
	for off := 0; off < bigFileSize; off += len(buf) {
		for i := 0; i < len(buf); i += blk {
			binary.LittleEndian.PutUint64(buf[i:], uint64(off+i))
		}
		if _, err := f.WriteAt(buf, int64(off)); err != nil {
			return err
		}
	}
	return f.Sync()
}

// BenchmarkRoundTrip measures one io_submit of a batch plus reaping all of
// it (Wait: user-space ring first, io_getevents if not all are there). AIO
// has no no-op request, so three stand-ins:
//
//   - poll: IOCB_CMD_POLL on a ready eventfd, completed inside io_submit;
//     the pure cost of the AIO machinery, no I/O.
//   - fdsync: IOCB_CMD_FDSYNC of a file with nothing dirty, run by the
//     kernel on a worker thread.
//   - read4k: 4 KiB O_DIRECT reads, real device I/O.
//
// ns/op is per batch; ns/req per request.
func BenchmarkRoundTrip(b *testing.B) {
	for _, op := range []string{"poll", "fdsync", "read4k"} {
		for _, batch := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/batch=%d", op, batch), func(b *testing.B) { benchRoundTrip(b, op, batch) })
		}
	}
}

func benchRoundTrip(b *testing.B, op string, batch int) {
	c := newContext(b, batch)
	cbs := make([]IOCB, batch)
	ptrs := make([]*IOCB, batch)
	evs := make([]IOEvent, batch)
	var want int64
	switch op {
	case "poll":
		efd, err := unix.Eventfd(1, unix.EFD_CLOEXEC)
		require.NoError(b, err)
		b.Cleanup(func() { unix.Close(efd) })
		for i := range cbs {
			cbs[i].PrepPoll(efd, unix.POLLIN)
		}
		want = unix.POLLIN
	case "fdsync":
		f := openDirect(b, filepath.Join(b.TempDir(), "sync"), os.O_RDWR|os.O_CREATE)
		for i := range cbs {
			cbs[i].PrepFdsync(int(f.Fd()))
		}
	case "read4k":
		path := filepath.Join(b.TempDir(), "read")
		require.NoError(b, os.WriteFile(path, pattern(batch*blk, 1), 0o644))
		f := openDirect(b, path, os.O_RDONLY)
		bufs := mapBuf(b, batch*blk)
		for i := range cbs {
			cbs[i].PrepPread(int(f.Fd()), bufs[i*blk:(i+1)*blk], int64(i)*blk)
		}
		want = blk
	}
	for i := range cbs {
		cbs[i].Data = uint64(i)
		ptrs[i] = &cbs[i]
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for p := ptrs; len(p) > 0; {
			n, err := c.Submit(p)
			if err != nil {
				b.Fatal(err)
			}
			p = p[n:]
		}
		for got := 0; got < batch; {
			n, err := c.Wait(batch-got, evs[got:], -1)
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
		for i := range evs {
			if evs[i].Res != want {
				b.Fatalf("res %d, want %d", evs[i].Res, want)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/req")
}

// BenchmarkRandRead4K drives 4 KiB O_DIRECT reads at random aligned offsets
// of a 1 GiB file from one goroutine, keeping qd in flight: each completion
// is checked (the block's offset stamp) and its slot resubmitted with a new
// offset, all resubmissions of one reap in one io_submit. reap=ring takes
// completions from the user-space ring first (Wait), reap=getevents always
// calls io_getevents.
func BenchmarkRandRead4K(b *testing.B) {
	for _, qd := range []int{1, 128} {
		for _, reap := range []string{"ring", "getevents"} {
			b.Run(fmt.Sprintf("qd=%d/reap=%s", qd, reap), func(b *testing.B) { benchRandRead(b, qd, reap) })
		}
	}
}

func benchRandRead(b *testing.B, qd int, reap string) {
	path := benchFile(b)
	f := openDirect(b, path, os.O_RDONLY)
	fd := int(f.Fd())
	c := newContext(b, qd)
	wait := c.Wait
	if reap == "getevents" {
		wait = c.GetEvents
	}
	bufs := mapBuf(b, qd*blk)
	cbs := make([]IOCB, qd)
	ptrs := make([]*IOCB, 0, qd)
	evs := make([]IOEvent, qd)
	rng := uint64(time.Now().UnixNano()) | 1
	const blocks = bigFileSize / blk
	issued, done := 0, 0
	issue := func(s int) {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		cbs[s].PrepPread(fd, bufs[s*blk:(s+1)*blk], int64(rng%blocks)*blk)
		cbs[s].Data = uint64(s)
		ptrs = append(ptrs, &cbs[s])
		issued++
	}
	b.ReportAllocs()
	cpu0 := bench.CPUTime()
	b.ResetTimer()
	for s := 0; s < qd && issued < b.N; s++ {
		issue(s)
	}
	submits := 0
	for done < b.N {
		for p := ptrs; len(p) > 0; {
			n, err := c.Submit(p)
			if err != nil {
				b.Fatal(err)
			}
			p = p[n:]
			submits++
		}
		ptrs = ptrs[:0]
		n, err := wait(1, evs, -1)
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range evs[:n] {
			s := int(ev.Data)
			if ev.Res != blk || binary.LittleEndian.Uint64(bufs[s*blk:]) != uint64(cbs[s].Offset) {
				b.Fatalf("read at %d: res %d, stamp %d", cbs[s].Offset, ev.Res, binary.LittleEndian.Uint64(bufs[s*blk:]))
			}
			done++
			if issued < b.N {
				issue(s)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IOPS")
	b.ReportMetric(float64(b.N)/float64(submits), "reqs/submit")
	b.ReportMetric(float64((bench.CPUTime()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-us/op")
}

// BenchmarkReap compares taking completions from the user-space ring with
// io_getevents. empty: one non-blocking reap with nothing to take (what an
// idle-ish scheduler does between submissions). batch=64: submit 64 polls
// that complete inside io_submit, then reap the 64 events; ns/op includes
// the io_submit, reap-ns/event times only the reaping.
func BenchmarkReap(b *testing.B) {
	for _, mode := range []string{"ring", "getevents"} {
		b.Run(mode+"/empty", func(b *testing.B) {
			c := newContext(b, 64)
			evs := make([]IOEvent, 64)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				var n int
				var err error
				if mode == "ring" {
					n, err = c.Reap(evs)
				} else {
					n, err = c.GetEvents(0, evs, 0)
				}
				if err != nil || n != 0 {
					b.Fatal(n, err)
				}
			}
		})
		b.Run(mode+"/batch=64", func(b *testing.B) {
			const batch = 64
			c := newContext(b, batch)
			efd, err := unix.Eventfd(1, unix.EFD_CLOEXEC)
			require.NoError(b, err)
			b.Cleanup(func() { unix.Close(efd) })
			cbs := make([]IOCB, batch)
			ptrs := make([]*IOCB, batch)
			for i := range cbs {
				cbs[i].PrepPoll(efd, unix.POLLIN)
				ptrs[i] = &cbs[i]
			}
			evs := make([]IOEvent, batch)
			var reapTime time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if n, err := c.Submit(ptrs); err != nil || n != batch {
					b.Fatal(n, err)
				}
				start := time.Now()
				var n int
				var err error
				if mode == "ring" {
					n, err = c.Reap(evs)
				} else {
					n, err = c.GetEvents(batch, evs, -1)
				}
				reapTime += time.Since(start)
				if err != nil || n != batch {
					b.Fatal(n, err)
				}
			}
			b.ReportMetric(float64(reapTime.Nanoseconds())/float64(b.N*batch), "reap-ns/event")
		})
	}
}

// TestHotPathZeroAlloc checks that submitting and reaping allocate nothing.
func TestHotPathZeroAlloc(t *testing.T) {
	c := newContext(t, 8)
	efd, err := unix.Eventfd(1, unix.EFD_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(efd)
	cbs := make([]IOCB, 8)
	ptrs := make([]*IOCB, 8)
	evs := make([]IOEvent, 8)
	allocs := testing.AllocsPerRun(100, func() {
		for i := range cbs {
			cbs[i].PrepPoll(efd, unix.POLLIN)
			ptrs[i] = &cbs[i]
		}
		if n, err := c.Submit(ptrs); err != nil || n != 8 {
			t.Fatal(n, err)
		}
		// Half from the ring, half with io_getevents.
		if n, err := c.Wait(4, evs[:4], time.Second); err != nil || n != 4 {
			t.Fatal(n, err)
		}
		if n, err := c.GetEvents(4, evs[:4], time.Second); err != nil || n != 4 {
			t.Fatal(n, err)
		}
		_, _ = c.Reap(evs) // nothing left
		_, _ = c.GetEvents(1, evs, 0)
	})
	require.Zero(t, allocs)
}
