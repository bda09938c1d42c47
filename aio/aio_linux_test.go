//go:build linux

package aio

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/internal/testenv"
)

const blk = 4096

// newContext sets up a context destroyed at the end of the test, or ends
// the test through testenv when this kernel cannot do AIO.
func newContext(tb testing.TB, nr int) *Context {
	tb.Helper()
	c, err := Setup(nr)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		testenv.Unavailable(tb, "aio", err)
	}
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, c.Destroy()) })
	return c
}

// openDirect opens path with O_DIRECT, or ends the test through testenv
// when the file system refuses direct I/O (tmpfs answers EINVAL).
func openDirect(tb testing.TB, path string, flag int) *os.File {
	tb.Helper()
	f, err := os.OpenFile(path, flag|unix.O_DIRECT, 0o644)
	if errors.Is(err, unix.EINVAL) {
		testenv.Unavailable(tb, "odirect", err)
	}
	require.NoError(tb, err)
	tb.Cleanup(func() { f.Close() })
	return f
}

// mapBuf returns size bytes of page-aligned memory outside the Go heap.
func mapBuf(tb testing.TB, size int) []byte {
	tb.Helper()
	b, err := mem.Map(size)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, mem.Unmap(b)) })
	return b
}

// fill writes a pattern unique to seed into b.
func fill(b []byte, seed uint64) {
	x := seed*0x9E3779B97F4A7C15 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
}

func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	fill(b, seed)
	return b
}

// submitAll submits every IOCB, reaping into sink when the context is full.
func submitAll(tb testing.TB, c *Context, cbs []*IOCB, sink func(IOEvent)) {
	tb.Helper()
	evs := make([]IOEvent, 64)
	for len(cbs) > 0 {
		n, err := c.Submit(cbs)
		if errors.Is(err, unix.EAGAIN) {
			m, err := c.Wait(1, evs, 5*time.Second)
			require.NoError(tb, err)
			require.NotZero(tb, m, "context full and nothing completes")
			for _, e := range evs[:m] {
				sink(e)
			}
			continue
		}
		require.NoError(tb, err)
		cbs = cbs[n:]
	}
}

// waitN reaps exactly n events.
func waitN(tb testing.TB, c *Context, n int) []IOEvent {
	tb.Helper()
	evs := make([]IOEvent, n)
	got := 0
	for got < n {
		m, err := c.Wait(n-got, evs[got:], 5*time.Second)
		require.NoError(tb, err)
		require.NotZero(tb, m, "timed out with %d of %d events", got, n)
		got += m
	}
	return evs
}

func TestLayoutMatchesKernel(t *testing.T) {
	var cb IOCB
	// Offsets of struct iocb in include/uapi/linux/aio_abi.h (little endian).
	off := map[string]uintptr{
		"aio_data": unsafe.Offsetof(cb.Data), "aio_key": unsafe.Offsetof(cb.Key),
		"aio_rw_flags": unsafe.Offsetof(cb.RWFlags), "aio_lio_opcode": unsafe.Offsetof(cb.Opcode),
		"aio_reqprio": unsafe.Offsetof(cb.Reqprio), "aio_fildes": unsafe.Offsetof(cb.Fildes),
		"aio_buf": unsafe.Offsetof(cb.Buf), "aio_nbytes": unsafe.Offsetof(cb.Nbytes),
		"aio_offset": unsafe.Offsetof(cb.Offset), "aio_reserved2": unsafe.Offsetof(cb.Reserved2),
		"aio_flags": unsafe.Offsetof(cb.Flags), "aio_resfd": unsafe.Offsetof(cb.Resfd),
	}
	want := map[string]uintptr{
		"aio_data": 0, "aio_key": 8, "aio_rw_flags": 12, "aio_lio_opcode": 16, "aio_reqprio": 18,
		"aio_fildes": 20, "aio_buf": 24, "aio_nbytes": 32, "aio_offset": 40, "aio_reserved2": 48,
		"aio_flags": 56, "aio_resfd": 60,
	}
	if (*[2]byte)(unsafe.Pointer(&[]uint16{1}[0]))[0] == 0 { // big endian
		want["aio_key"], want["aio_rw_flags"] = 12, 8
	}
	require.Equal(t, want, off)
	require.EqualValues(t, 64, unsafe.Sizeof(cb))
	var ev IOEvent
	require.EqualValues(t, 32, unsafe.Sizeof(ev))
	require.EqualValues(t, []uintptr{0, 8, 16, 24},
		[]uintptr{unsafe.Offsetof(ev.Data), unsafe.Offsetof(ev.Obj), unsafe.Offsetof(ev.Res), unsafe.Offsetof(ev.Res2)})
}

func TestSetupDestroy(t *testing.T) {
	_, err := Setup(0)
	require.ErrorIs(t, err, unix.EINVAL)

	c, err := Setup(8)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		testenv.Unavailable(t, "aio", err)
	}
	require.NoError(t, err)
	require.NotZero(t, c.ID())
	require.Equal(t, 8, c.Nr())
	require.True(t, c.UserRing(), "this kernel's ring should be readable from user space")
	require.Equal(t, uint32(AIO_RING_MAGIC), c.ring.magic)
	require.GreaterOrEqual(t, len(c.events), 8)
	require.Equal(t, c.ring.head, c.ring.tail)

	require.NoError(t, c.Destroy())
	require.False(t, c.UserRing())

	// Everything after Destroy is a clean EINVAL, not a crash.
	var se *os.SyscallError
	err = c.Destroy()
	require.ErrorAs(t, err, &se)
	require.Equal(t, "io_destroy", se.Syscall)
	require.ErrorIs(t, err, unix.EINVAL)
	var cb IOCB
	cb.PrepFsync(0)
	_, err = c.Submit([]*IOCB{&cb})
	require.ErrorIs(t, err, unix.EINVAL)
	_, err = c.Reap(make([]IOEvent, 1))
	require.ErrorIs(t, err, unix.EINVAL)
}

func TestResult(t *testing.T) {
	n, err := (&IOEvent{Res: 4096}).Result()
	require.NoError(t, err)
	require.Equal(t, 4096, n)
	n, err = (&IOEvent{Res: -int64(unix.EIO)}).Result()
	require.Equal(t, 0, n)
	require.Equal(t, syscall.EIO, err)
	require.ErrorIs(t, err, unix.EIO)
}

// pipeline pushes total requests through c keeping inflight in flight,
// each using its own 4 KiB slot of bufs: prep fills the IOCB for request i,
// check verifies its completion. reap selects how completions are taken.
func pipeline(t *testing.T, c *Context, inflight, total int, bufs []byte,
	prep func(cb *IOCB, i int, buf []byte), check func(ev IOEvent, i int, buf []byte), reap string) {
	t.Helper()
	cbs := make([]IOCB, inflight)
	req := make([]int, inflight) // request number per slot
	slot := func(s int) []byte { return bufs[s*blk : (s+1)*blk] }
	issued, done := 0, 0
	var pending []*IOCB
	issue := func(s int) {
		prep(&cbs[s], issued, slot(s))
		cbs[s].Data = uint64(s)
		req[s] = issued
		issued++
		pending = append(pending, &cbs[s])
	}
	for s := 0; s < inflight && issued < total; s++ {
		issue(s)
	}
	evs := make([]IOEvent, inflight)
	for done < total {
		for len(pending) > 0 {
			n, err := c.Submit(pending)
			require.NoError(t, err)
			pending = pending[n:]
		}
		var n int
		var err error
		switch reap {
		case "ring":
			n, err = c.Wait(1, evs, 5*time.Second)
		case "getevents":
			n, err = c.GetEvents(1, evs, 5*time.Second)
		}
		require.NoError(t, err)
		require.NotZero(t, n, "no completion within 5s")
		pending = pending[:0]
		for _, ev := range evs[:n] {
			s := int(ev.Data)
			check(ev, req[s], slot(s))
			done++
			if issued < total {
				issue(s)
			}
		}
	}
}

// TestReadWrite64InFlight writes 1 MiB as 4 KiB O_DIRECT writes with 64 in
// flight, reads it back the same way, and checks every byte, both through
// the request buffers and through an ordinary buffered read of the file.
func TestReadWrite64InFlight(t *testing.T) {
	const inflight, blocks = 64, 256
	c := newContext(t, inflight)
	path := filepath.Join(t.TempDir(), "data")
	f := openDirect(t, path, os.O_RDWR|os.O_CREATE)
	fd := int(f.Fd())
	bufs := mapBuf(t, inflight*blk)

	pipeline(t, c, inflight, blocks, bufs,
		func(cb *IOCB, i int, buf []byte) {
			fill(buf, uint64(i))
			cb.PrepPwrite(fd, buf, int64(i)*blk)
		},
		func(ev IOEvent, i int, buf []byte) {
			n, err := ev.Result()
			require.NoError(t, err, "write block %d", i)
			require.Equal(t, blk, n)
		}, "ring")

	want := make([]byte, blocks*blk)
	for i := 0; i < blocks; i++ {
		fill(want[i*blk:(i+1)*blk], uint64(i))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytesEqual(want, got), "buffered read differs from what was written")

	for _, reap := range []string{"ring", "getevents"} {
		clear(bufs)
		pipeline(t, c, inflight, blocks, bufs,
			func(cb *IOCB, i int, buf []byte) {
				clear(buf)
				cb.PrepPread(fd, buf, int64(i)*blk)
			},
			func(ev IOEvent, i int, buf []byte) {
				n, err := ev.Result()
				require.NoError(t, err, "read block %d", i)
				require.Equal(t, blk, n)
				require.True(t, bytesEqual(want[i*blk:(i+1)*blk], buf), "%s: block %d differs", reap, i)
			}, reap)
	}
}

// bytesEqual avoids testify printing megabytes on failure.
func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

func TestPreadvPwritev(t *testing.T) {
	c := newContext(t, 4)
	f := openDirect(t, filepath.Join(t.TempDir(), "v"), os.O_RDWR|os.O_CREATE)
	fd := int(f.Fd())
	src := mapBuf(t, 16*1024)
	fill(src, 7)
	dst := mapBuf(t, 16*1024)

	// Write 4 KiB + 8 KiB + 4 KiB, read back split 8 KiB + 4 KiB + 4 KiB
	// into buffers placed in a different order.
	wv := []unix.Iovec{iov(src[:4096]), iov(src[4096:12288]), iov(src[12288:])}
	var cb IOCB
	cb.PrepPwritev(fd, wv, 4096)
	cb.Data = 1
	n, err := c.Submit([]*IOCB{&cb})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	ev := waitN(t, c, 1)[0]
	require.EqualValues(t, 1, ev.Data)
	got, err := ev.Result()
	require.NoError(t, err)
	require.Equal(t, 16384, got)

	rv := []unix.Iovec{iov(dst[8192:16384]), iov(dst[0:4096]), iov(dst[4096:8192])}
	cb.PrepPreadv(fd, rv, 4096)
	cb.Data = 2
	_, err = c.Submit([]*IOCB{&cb})
	require.NoError(t, err)
	ev = waitN(t, c, 1)[0]
	require.EqualValues(t, 2, ev.Data)
	got, err = ev.Result()
	require.NoError(t, err)
	require.Equal(t, 16384, got)
	require.True(t, bytesEqual(src[:8192], dst[8192:]))
	require.True(t, bytesEqual(src[8192:12288], dst[:4096]))
	require.True(t, bytesEqual(src[12288:], dst[4096:8192]))

	st, err := f.Stat()
	require.NoError(t, err)
	require.EqualValues(t, 4096+16384, st.Size())
}

func iov(b []byte) unix.Iovec {
	v := unix.Iovec{Base: &b[0]}
	v.SetLen(len(b))
	return v
}

func TestFsyncFdsyncAndRWFlags(t *testing.T) {
	c := newContext(t, 8)
	path := filepath.Join(t.TempDir(), "s")
	f := openDirect(t, path, os.O_RDWR|os.O_CREATE)
	fd := int(f.Fd())
	buf := mapBuf(t, 2*blk)
	fill(buf, 3)

	// A durable write (RWF_DSYNC), then FSYNC and FDSYNC in one batch.
	var w, fs, fds IOCB
	w.PrepPwrite(fd, buf[:blk], 0)
	w.RWFlags = RWF_DSYNC
	w.Data = 1
	fs.PrepFsync(fd)
	fs.Data = 2
	fds.PrepFdsync(fd)
	fds.Data = 3
	n, err := c.Submit([]*IOCB{&w, &fs, &fds})
	require.NoError(t, err)
	require.Equal(t, 3, n)
	res := map[uint64]int64{}
	for _, ev := range waitN(t, c, 3) {
		res[ev.Data] = ev.Res
	}
	require.Equal(t, map[uint64]int64{1: blk, 2: 0, 3: 0}, res)

	// RWF_APPEND ignores the offset: this write lands at 4096, not 0.
	// (It also proves aio_rw_flags sits where the kernel reads it.)
	w.PrepPwrite(fd, buf[blk:], 0)
	w.RWFlags = RWF_APPEND
	_, err = c.Submit([]*IOCB{&w})
	require.NoError(t, err)
	got, err := waitN(t, c, 1)[0].Result()
	require.NoError(t, err)
	require.Equal(t, blk, got)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytesEqual(buf, data), "RWF_APPEND write did not append")

	// Flags the kernel does not know are refused by io_submit itself.
	w.PrepPwrite(fd, buf[:blk], 0)
	w.RWFlags = 1 << 30
	n, err = c.Submit([]*IOCB{&w})
	require.Equal(t, 0, n)
	var se *os.SyscallError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "io_submit", se.Syscall)
	require.ErrorIs(t, err, unix.EOPNOTSUPP)

	// Syncs take no RWF flags.
	fs.PrepFsync(fd)
	fs.RWFlags = RWF_DSYNC
	_, err = c.Submit([]*IOCB{&fs})
	require.ErrorIs(t, err, unix.EINVAL)
}

func TestShortReadAtEOF(t *testing.T) {
	c := newContext(t, 4)
	path := filepath.Join(t.TempDir(), "short")
	want := pattern(6000, 9)
	require.NoError(t, os.WriteFile(path, want, 0o644))
	f := openDirect(t, path, os.O_RDONLY)
	buf := mapBuf(t, 2*blk)

	var a, b IOCB
	a.PrepPread(int(f.Fd()), buf, blk) // 8 KiB asked, 1904 bytes left
	a.Data = 1
	b.PrepPread(int(f.Fd()), buf[:blk], 2*blk) // entirely past EOF
	b.Data = 2
	_, err := c.Submit([]*IOCB{&a, &b})
	require.NoError(t, err)
	for _, ev := range waitN(t, c, 2) {
		n, err := ev.Result()
		require.NoError(t, err)
		switch ev.Data {
		case 1:
			require.Equal(t, 6000-blk, n)
			require.True(t, bytesEqual(want[blk:], buf[:n]))
		case 2:
			require.Equal(t, 0, n)
		}
	}
}

// TestMisalignedEINVAL checks that each kind of misalignment surfaces as an
// *dio.EINVALError naming the requirement and the culprit.
func TestMisalignedEINVAL(t *testing.T) {
	c := newContext(t, 4)
	path := filepath.Join(t.TempDir(), "mis")
	require.NoError(t, os.WriteFile(path, pattern(4*blk, 1), 0o644))
	f := openDirect(t, path, os.O_RDONLY)
	fd := int(f.Fd())
	a, err := dio.ForFD(fd)
	require.NoError(t, err)
	memAlign, offAlign := a.Memory, a.Offset
	require.Positive(t, offAlign)
	t.Logf("alignment: %s", a)
	buf := mapBuf(t, 2*blk)

	cases := []struct {
		name, culprit string
		buf           []byte
		off           int64
	}{
		{"offset", "offset", buf[:blk], int64(offAlign) / 2},
		{"length", "length", buf[:offAlign/2], 0},
		// A misaligned buffer inside one page is accepted by 6.18;
		// one that crosses a page boundary is not.
		{"buffer", "buffer address", buf[max(memAlign, 1)/2:][:blk], 0},
	}
	for _, tc := range cases {
		if tc.name == "buffer" && memAlign <= 1 {
			continue // the device takes any address
		}
		var cb IOCB
		cb.PrepPread(fd, tc.buf, tc.off)
		n, err := c.Submit([]*IOCB{&cb})
		where := "io_submit"
		if err == nil {
			// The usual path: accepted, failed when the I/O was built.
			require.Equal(t, 1, n)
			_, err = waitN(t, c, 1)[0].Result()
			where = "completion"
		}
		require.Error(t, err, tc.name)
		err = ExplainEINVAL(err, &cb)
		var ae *dio.EINVALError
		require.ErrorAs(t, err, &ae, tc.name)
		require.ErrorIs(t, err, syscall.EINVAL)
		msg := err.Error()
		t.Logf("from %s: %s", where, msg)
		require.Contains(t, msg, tc.culprit)
	}

	// Other errors and other opcodes pass through unchanged.
	var cb IOCB
	cb.PrepFsync(fd)
	require.Equal(t, unix.EINVAL, ExplainEINVAL(unix.EINVAL, &cb))
	cb.PrepPread(fd, buf, 0)
	require.Equal(t, unix.EIO, ExplainEINVAL(unix.EIO, &cb))
	require.NoError(t, ExplainEINVAL(nil, &cb))
	// Without O_DIRECT, alignment is not the explanation.
	bf, err := os.Open(path)
	require.NoError(t, err)
	defer bf.Close()
	cb.PrepPread(int(bf.Fd()), buf[1:], 1)
	require.Equal(t, unix.EINVAL, ExplainEINVAL(unix.EINVAL, &cb))
}

func TestResfdNotification(t *testing.T) {
	const n = 8
	c := newContext(t, n)
	path := filepath.Join(t.TempDir(), "resfd")
	require.NoError(t, os.WriteFile(path, pattern(n*blk, 5), 0o644))
	f := openDirect(t, path, os.O_RDONLY)
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	require.NoError(t, err)
	defer unix.Close(efd)
	bufs := mapBuf(t, n*blk)

	cbs := make([]IOCB, n)
	ptrs := make([]*IOCB, n)
	for i := range cbs {
		cbs[i].PrepPread(int(f.Fd()), bufs[i*blk:(i+1)*blk], int64(i)*blk)
		cbs[i].Data = uint64(100 + i)
		cbs[i].SetResfd(efd)
		ptrs[i] = &cbs[i]
	}
	submitAll(t, c, ptrs, func(IOEvent) { t.Fatal("unexpected completion during submit") })

	// Each completion adds 1 to the eventfd; wait on it with poll, as a
	// scheduler would, until all n are counted.
	var count uint64
	deadline := time.Now().Add(5 * time.Second)
	for count < n {
		require.True(t, time.Now().Before(deadline), "eventfd counted %d of %d", count, n)
		pfd := []unix.PollFd{{Fd: int32(efd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, 1000); errors.Is(err, unix.EINTR) {
			continue
		}
		var b [8]byte
		m, err := unix.Read(efd, b[:])
		if errors.Is(err, unix.EAGAIN) {
			continue
		}
		require.NoError(t, err)
		require.Equal(t, 8, m)
		count += *(*uint64)(unsafe.Pointer(&b[0]))
	}
	require.EqualValues(t, n, count)

	// The completions are all there already: Reap needs no waiting.
	evs := make([]IOEvent, n+1)
	got, err := c.Reap(evs)
	require.NoError(t, err)
	require.Equal(t, n, got)
	seen := map[uint64]bool{}
	for _, ev := range evs[:got] {
		r, err := ev.Result()
		require.NoError(t, err)
		require.Equal(t, blk, r)
		seen[ev.Data] = true
	}
	require.Len(t, seen, n)
}

func TestGetEventsTimeout(t *testing.T) {
	c := newContext(t, 4)
	evs := make([]IOEvent, 4)

	n, err := c.GetEvents(1, evs, 0)
	require.NoError(t, err)
	require.Zero(t, n)

	for _, wait := range []func(int, []IOEvent, time.Duration) (int, error){c.GetEvents, c.Wait} {
		start := time.Now()
		n, err = wait(1, evs, 50*time.Millisecond)
		elapsed := time.Since(start)
		require.NoError(t, err)
		require.Zero(t, n)
		require.GreaterOrEqual(t, elapsed, 50*time.Millisecond)
		require.Less(t, elapsed, time.Second)
	}
}

// TestGetEventsRetriesEINTR interrupts io_getevents with signals (SIGURG,
// which the Go runtime ignores unless preempting) every few milliseconds and
// checks that GetEvents keeps waiting, for the remaining time only.
func TestGetEventsRetriesEINTR(t *testing.T) {
	c := newContext(t, 4)
	evs := make([]IOEvent, 4)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, tid := unix.Getpid(), unix.Gettid()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				_ = unix.Tgkill(pid, tid, unix.SIGURG)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	// The raw system call is interrupted here...
	ts := unix.NsecToTimespec(int64(time.Second))
	_, e := c.getevents(1, evs, &ts)
	require.Equal(t, unix.EINTR, e, "signals should interrupt io_getevents")

	// ...and the wrapper rides through and still honours its timeout.
	const timeout = 200 * time.Millisecond
	start := time.Now()
	n, err := c.GetEvents(1, evs, timeout)
	elapsed := time.Since(start)
	require.NoError(t, err)
	require.Zero(t, n)
	require.GreaterOrEqual(t, elapsed, timeout)
	require.Less(t, elapsed, timeout+400*time.Millisecond, "the timeout restarted on EINTR")
}

func TestCancel(t *testing.T) {
	c := newContext(t, 4)
	path := filepath.Join(t.TempDir(), "c")
	require.NoError(t, os.WriteFile(path, pattern(blk, 2), 0o644))
	f := openDirect(t, path, os.O_RDONLY)
	buf := mapBuf(t, blk)

	// File reads cannot be cancelled: a proper error, and the read still
	// completes normally.
	cb := new(IOCB)
	cb.PrepPread(int(f.Fd()), buf, 0)
	cb.Data = 1
	_, err := c.Submit([]*IOCB{cb})
	require.NoError(t, err)
	err = c.Cancel(cb)
	var se *os.SyscallError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "io_cancel", se.Syscall)
	require.True(t, errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EAGAIN), "got %v", err)
	ev := waitN(t, c, 1)[0]
	require.EqualValues(t, 1, ev.Data)
	n, err := ev.Result()
	require.NoError(t, err)
	require.Equal(t, blk, n)

	// An IOCB that was never submitted.
	never := new(IOCB)
	never.PrepPread(int(f.Fd()), buf, 0)
	require.ErrorIs(t, c.Cancel(never), unix.EINVAL)

	// A poll request can be cancelled: nil, then its completion arrives.
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	require.NoError(t, err)
	defer unix.Close(efd)
	p := new(IOCB)
	p.PrepPoll(efd, unix.POLLIN)
	p.Data = 2
	_, err = c.Submit([]*IOCB{p})
	require.NoError(t, err)
	got, err := c.Reap(make([]IOEvent, 1))
	require.NoError(t, err)
	require.Zero(t, got, "poll on an empty eventfd must not complete")
	require.NoError(t, c.Cancel(p))
	ev = waitN(t, c, 1)[0]
	require.EqualValues(t, 2, ev.Data)
	t.Logf("cancelled poll completed with res %d", ev.Res)
}

// TestPollCompletes checks IOCB_CMD_POLL on a ready eventfd completes at once
// with the ready events (the benchmarks use it as AIO's nearest thing to a
// no-op).
func TestPollCompletes(t *testing.T) {
	c := newContext(t, 4)
	efd, err := unix.Eventfd(1, unix.EFD_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(efd)
	var p IOCB
	p.PrepPoll(efd, unix.POLLIN)
	_, err = c.Submit([]*IOCB{&p})
	require.NoError(t, err)
	evs := make([]IOEvent, 1)
	n, err := c.Reap(evs)
	require.NoError(t, err)
	require.Equal(t, 1, n, "poll of a ready file completes inside io_submit")
	require.EqualValues(t, unix.POLLIN, evs[0].Res&unix.POLLIN)
}

// TestRingReapMatchesGetEvents reads the same blocks twice, reaping once
// from the user-space ring and once with io_getevents, and compares.
func TestRingReapMatchesGetEvents(t *testing.T) {
	const n = 32
	c := newContext(t, n)
	require.True(t, c.UserRing())
	path := filepath.Join(t.TempDir(), "r")
	want := pattern(n*blk-100, 4) // the last read is short
	require.NoError(t, os.WriteFile(path, want, 0o644))
	f := openDirect(t, path, os.O_RDONLY)

	type result struct {
		data     uint64
		res      int64
		res2     int64
		contents string
	}
	run := func(reap func([]IOEvent) (int, error)) []result {
		bufs := mapBuf(t, n*blk)
		cbs := make([]IOCB, n)
		ptrs := make([]*IOCB, n)
		for i := range cbs {
			cbs[i].PrepPread(int(f.Fd()), bufs[i*blk:(i+1)*blk], int64(i)*blk)
			cbs[i].Data = uint64(i)
			ptrs[i] = &cbs[i]
		}
		submitAll(t, c, ptrs, func(IOEvent) { t.Fatal("unexpected") })
		var out []result
		evs := make([]IOEvent, 5) // small, so the ring is read in pieces
		deadline := time.Now().Add(5 * time.Second)
		for len(out) < n {
			require.True(t, time.Now().Before(deadline))
			m, err := reap(evs)
			require.NoError(t, err)
			for _, ev := range evs[:m] {
				i := ev.Data
				out = append(out, result{ev.Data, ev.Res, ev.Res2, string(bufs[i*blk:][:max(ev.Res, 0)])})
				require.Equal(t, uint64(uintptr(unsafe.Pointer(&cbs[i]))), ev.Obj, "obj is the IOCB address")
			}
		}
		sort.Slice(out, func(a, b int) bool { return out[a].data < out[b].data })
		return out
	}
	ring := run(func(evs []IOEvent) (int, error) { return c.reapRing(evs), nil })
	sys := run(func(evs []IOEvent) (int, error) { return c.GetEvents(1, evs, time.Second) })
	require.Equal(t, sys, ring)
	require.EqualValues(t, n*blk-100-(n-1)*blk, ring[n-1].res)
}

// TestRingWrapAndMixedReaping sends many more completions through the ring
// than it has slots, alternating user-space and kernel reaping, so both
// sides see each other's head and the ring wraps many times.
func TestRingWrapAndMixedReaping(t *testing.T) {
	c := newContext(t, 8)
	efd, err := unix.Eventfd(1, unix.EFD_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(efd)
	const total, batch = 3000, 50
	cbs := make([]IOCB, batch)
	ptrs := make([]*IOCB, batch)
	evs := make([]IOEvent, 7)
	seen := make([]bool, total)
	next := 0
	for b := 0; next < total; b++ {
		for i := range cbs {
			cbs[i].PrepPoll(efd, unix.POLLIN)
			cbs[i].Data = uint64(next + i)
			ptrs[i] = &cbs[i]
		}
		submitAll(t, c, ptrs, func(IOEvent) { t.Fatal("unexpected EAGAIN") })
		for got := 0; got < batch; {
			var m int
			if b%2 == 0 {
				m = c.reapRing(evs)
			} else {
				m, err = c.GetEvents(1, evs, time.Second)
				require.NoError(t, err)
			}
			for _, ev := range evs[:m] {
				require.False(t, seen[ev.Data], "event %d twice", ev.Data)
				seen[ev.Data] = true
			}
			got += m
		}
		next += batch
	}
	for i, s := range seen {
		require.True(t, s, "event %d never seen", i)
	}
}

// TestReapFallback checks Reap and Wait through io_getevents when the ring
// is not usable from user space.
func TestReapFallback(t *testing.T) {
	c := newContext(t, 4)
	ring, events := c.ring, c.events
	c.ring, c.events = nil, nil
	defer func() { c.ring, c.events = ring, events }()
	require.False(t, c.UserRing())
	efd, err := unix.Eventfd(1, unix.EFD_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(efd)
	cbs := make([]IOCB, 3)
	for i := range cbs {
		cbs[i].PrepPoll(efd, unix.POLLIN)
		cbs[i].Data = uint64(i)
	}
	_, err = c.Submit([]*IOCB{&cbs[0], &cbs[1], &cbs[2]})
	require.NoError(t, err)
	evs := make([]IOEvent, 2)
	n, err := c.Reap(evs)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = c.Wait(1, evs, time.Second)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

// TestSubmitMoreThanNr pushes 512 reads through a context set up for 4:
// io_submit accepts part of a batch, then refuses with EAGAIN until
// completions are reaped; everything must still complete with the right
// data.
func TestSubmitMoreThanNr(t *testing.T) {
	const total = 512
	c := newContext(t, 4)
	path := filepath.Join(t.TempDir(), "many")
	want := pattern(total*blk, 11)
	require.NoError(t, os.WriteFile(path, want, 0o644))
	f := openDirect(t, path, os.O_RDONLY)
	bufs := mapBuf(t, total*blk)
	cbs := make([]IOCB, total)
	pending := make([]*IOCB, total)
	for i := range cbs {
		cbs[i].PrepPread(int(f.Fd()), bufs[i*blk:(i+1)*blk], int64(i)*blk)
		cbs[i].Data = uint64(i)
		pending[i] = &cbs[i]
	}
	done := make([]bool, total)
	ndone := 0
	complete := func(ev IOEvent) {
		n, err := ev.Result()
		require.NoError(t, err)
		require.Equal(t, blk, n)
		i := int(ev.Data)
		require.False(t, done[i])
		require.True(t, bytesEqual(want[i*blk:(i+1)*blk], bufs[i*blk:(i+1)*blk]), "block %d", i)
		done[i] = true
		ndone++
	}
	var partial, eagain int
	evs := make([]IOEvent, 64)
	for len(pending) > 0 {
		n, err := c.Submit(pending)
		switch {
		case errors.Is(err, unix.EAGAIN):
			eagain++
			m, err := c.Wait(1, evs, 5*time.Second)
			require.NoError(t, err)
			require.NotZero(t, m)
			for _, ev := range evs[:m] {
				complete(ev)
			}
			continue
		case err != nil:
			require.NoError(t, err)
		}
		if n < len(pending) {
			partial++
		}
		pending = pending[n:]
	}
	for ndone < total {
		for _, ev := range waitN(t, c, 1) {
			complete(ev)
		}
	}
	t.Logf("ring of %d slots: %d partial submits, %d EAGAIN", len(c.events), partial, eagain)
	require.NotZero(t, partial, "a batch larger than the ring should be accepted in part")
	require.NotZero(t, eagain, "a full context should refuse with EAGAIN")
}

// TestConcurrentSubmit submits from several goroutines while one reaps.
func TestConcurrentSubmit(t *testing.T) {
	const workers, per = 4, 32
	c := newContext(t, workers*per)
	path := filepath.Join(t.TempDir(), "cc")
	want := pattern(workers*per*blk, 13)
	require.NoError(t, os.WriteFile(path, want, 0o644))
	f := openDirect(t, path, os.O_RDONLY)
	bufs := mapBuf(t, workers*per*blk)
	cbs := make([]IOCB, workers*per)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w * per; i < (w+1)*per; i++ {
				cbs[i].PrepPread(int(f.Fd()), bufs[i*blk:(i+1)*blk], int64(i)*blk)
				cbs[i].Data = uint64(i)
				if _, err := c.Submit([]*IOCB{&cbs[i]}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	evs := waitN(t, c, workers*per)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, ev := range evs {
		i := int(ev.Data)
		require.EqualValues(t, blk, ev.Res)
		require.True(t, bytesEqual(want[i*blk:(i+1)*blk], bufs[i*blk:(i+1)*blk]))
	}
}
