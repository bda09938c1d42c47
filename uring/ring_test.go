//go:build linux

package uring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/testenv"
)

const blockSize = 4096

// newRing sets up a ring, or ends the test when io_uring is unavailable.
func newRing(t testing.TB, entries uint32, p *Params) *Ring {
	t.Helper()
	r, err := Setup(entries, p)
	if err != nil {
		testenv.Unavailable(t, "uring", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// fill writes a pattern that differs per block and per seed, so a block
// read from the wrong offset never verifies.
func fill(b []byte, seed, block int) {
	for i := range b {
		b[i] = byte(i*7 + block*13 + seed*31 + i>>8)
	}
}

// waitCQEs submits what is queued and collects exactly n completions,
// failing the test if they do not arrive within 10 seconds.
func waitCQEs(t testing.TB, r *Ring, n int) []CQE {
	t.Helper()
	got := make([]CQE, 0, n)
	buf := make([]CQE, 64)
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d completions after 10s", len(got), n)
		}
		_, err := r.SubmitAndWaitTimeout(1, time.Second)
		require.NoError(t, err)
		k, err := r.ReapCQEs(buf)
		require.NoError(t, err)
		got = append(got, buf[:k]...)
	}
	return got
}

func byUserData(t testing.TB, cqes []CQE) map[uint64]CQE {
	t.Helper()
	m := make(map[uint64]CQE, len(cqes))
	for _, c := range cqes {
		_, dup := m[c.UserData]
		require.False(t, dup, "user data %d completed twice", c.UserData)
		m[c.UserData] = c
	}
	return m
}

func TestNopBatch(t *testing.T) {
	r := newRing(t, 16, nil)
	for i := uint64(1); i <= 8; i++ {
		sqe := r.GetSQE()
		require.NotNil(t, sqe)
		sqe.PrepNop()
		sqe.UserData = i
	}
	n, err := r.Submit()
	require.NoError(t, err)
	require.Equal(t, 8, n)
	m := byUserData(t, waitCQEs(t, r, 8))
	for i := uint64(1); i <= 8; i++ {
		require.Contains(t, m, i)
		require.NoError(t, m[i].Err())
	}
}

func TestGetSQEFull(t *testing.T) {
	r := newRing(t, 4, nil)
	for i := 0; i < 4; i++ {
		sqe := r.GetSQE()
		require.NotNil(t, sqe)
		sqe.PrepNop()
	}
	require.Nil(t, r.GetSQE(), "SQ of 4 handed out a fifth SQE")
	require.Equal(t, uint32(0), r.SQSpace())
	waitCQEs(t, r, 4)
	require.NotNil(t, r.GetSQE())
}

// configs are the ring set-ups every data-path test runs under.
var configs = []struct {
	name   string
	params Params
}{
	{"default", Params{}},
	{"sqpoll", Params{Flags: IORING_SETUP_SQPOLL, SQThreadIdle: 10 * time.Millisecond, SQThreadCPU: -1}},
	{"single-issuer+defer-taskrun", Params{Flags: IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN}},
	{"coop-taskrun+taskrun-flag", Params{Flags: IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG}},
	{"submit-all+cqsize", Params{Flags: IORING_SETUP_SUBMIT_ALL, CQEntries: 256}},
}

func TestDirectReadWrite64InFlight(t *testing.T) {
	const depth = 64
	for ci, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			// DEFER_TASKRUN and SINGLE_ISSUER tie the ring to the
			// thread that created it.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			p := cfg.params
			r := newRing(t, depth, &p)
			f := testenv.DirectFile(t)
			fd := int(f.Fd())
			buf := testenv.AlignedBuf(t, depth*blockSize)

			for i := 0; i < depth; i++ {
				b := buf[i*blockSize : (i+1)*blockSize]
				fill(b, ci, i)
				sqe := r.GetSQE()
				sqe.PrepWrite(fd, b, int64(i)*blockSize)
				sqe.UserData = uint64(i)
			}
			for _, c := range waitCQEs(t, r, depth) {
				require.Equal(t, int32(blockSize), c.Res, "write %d: %v", c.UserData, c.Err())
			}

			clear(buf)
			// Read back in a different order than written: block i
			// goes to slot depth-1-i.
			for i := 0; i < depth; i++ {
				slot := depth - 1 - i
				sqe := r.GetSQE()
				sqe.PrepRead(fd, buf[slot*blockSize:(slot+1)*blockSize], int64(i)*blockSize)
				sqe.UserData = uint64(i)
			}
			m := byUserData(t, waitCQEs(t, r, depth))
			want := make([]byte, blockSize)
			for i := 0; i < depth; i++ {
				require.Equal(t, int32(blockSize), m[uint64(i)].Res)
				slot := depth - 1 - i
				fill(want, ci, i)
				require.True(t, bytes.Equal(want, buf[slot*blockSize:(slot+1)*blockSize]), "block %d differs", i)
			}
		})
	}
}

func TestVectored(t *testing.T) {
	r := newRing(t, 8, nil)
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	src := testenv.AlignedBuf(t, 3*blockSize)
	for i := 0; i < 3; i++ {
		fill(src[i*blockSize:(i+1)*blockSize], 5, i)
	}
	wiov := make([]unix.Iovec, 3)
	for i := range wiov {
		wiov[i].Base = &src[i*blockSize]
		wiov[i].SetLen(blockSize)
	}
	r.GetSQE().PrepWritev(fd, wiov, 0)
	require.Equal(t, int32(3*blockSize), waitCQEs(t, r, 1)[0].Res)

	dst := testenv.AlignedBuf(t, 3*blockSize)
	riov := []unix.Iovec{{Base: &dst[2*blockSize]}, {Base: &dst[0]}}
	riov[0].SetLen(blockSize)
	riov[1].SetLen(2 * blockSize)
	r.GetSQE().PrepReadv(fd, riov, 0)
	require.Equal(t, int32(3*blockSize), waitCQEs(t, r, 1)[0].Res)
	require.Equal(t, src[:blockSize], dst[2*blockSize:])
	require.Equal(t, src[blockSize:], dst[:2*blockSize])
	runtime.KeepAlive(wiov)
	runtime.KeepAlive(riov)
}

func TestFixedBuffersAndFiles(t *testing.T) {
	r := newRing(t, 8, nil)
	f1, f2 := testenv.DirectFile(t), testenv.DirectFile(t)
	bufs := [][]byte{testenv.AlignedBuf(t, 16*blockSize), testenv.AlignedBuf(t, 16*blockSize)}
	require.NoError(t, r.RegisterBuffers(bufs))
	require.NoError(t, r.RegisterFiles([]int32{int32(f1.Fd()), -1}))

	// Slot 1 starts empty; fill it with f2.
	n, err := r.UpdateFiles(1, []int32{int32(f2.Fd())})
	require.NoError(t, err)
	require.Equal(t, 1, n)

	for file := 0; file < 2; file++ {
		w := bufs[0][4*blockSize : 6*blockSize] // inside buffer 0
		fill(w, 9, file)
		sqe := r.GetSQE()
		sqe.PrepWriteFixed(file, w, blockSize, 0)
		sqe.Flags |= IOSQE_FIXED_FILE
		require.Equal(t, int32(len(w)), waitCQEs(t, r, 1)[0].Res)

		rd := bufs[1][8*blockSize : 10*blockSize]
		clear(rd)
		sqe = r.GetSQE()
		sqe.PrepReadFixed(file, rd, blockSize, 1)
		sqe.Flags |= IOSQE_FIXED_FILE
		require.Equal(t, int32(len(rd)), waitCQEs(t, r, 1)[0].Res)
		require.Equal(t, w, rd)
	}
	// What went through the fixed paths is really in the files.
	for file, f := range []*os.File{f1, f2} {
		want := make([]byte, 2*blockSize)
		fill(want, 9, file)
		got := testenv.AlignedBuf(t, 2*blockSize)
		_, err := unix.Pread(int(f.Fd()), got, blockSize)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}

	// A read outside the registered buffer is refused, not performed.
	sqe := r.GetSQE()
	sqe.PrepReadFixed(0, testenv.AlignedBuf(t, blockSize), 0, 1)
	sqe.Flags |= IOSQE_FIXED_FILE
	require.ErrorIs(t, waitCQEs(t, r, 1)[0].Err(), unix.EFAULT)

	require.NoError(t, r.UnregisterFiles())
	require.NoError(t, r.UnregisterBuffers())
}

func TestFsyncDatasyncLinked(t *testing.T) {
	r := newRing(t, 8, nil)
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	buf := testenv.AlignedBuf(t, blockSize)
	fill(buf, 1, 1)
	// write -> fsync -> fdatasync, linked so each starts after the last.
	sqe := r.GetSQE()
	sqe.PrepWrite(fd, buf, 0)
	sqe.Flags |= IOSQE_IO_LINK
	sqe.UserData = 1
	sqe = r.GetSQE()
	sqe.PrepFsync(fd, 0)
	sqe.Flags |= IOSQE_IO_LINK
	sqe.UserData = 2
	sqe = r.GetSQE()
	sqe.PrepFsync(fd, IORING_FSYNC_DATASYNC)
	sqe.UserData = 3
	m := byUserData(t, waitCQEs(t, r, 3))
	require.Equal(t, int32(blockSize), m[1].Res)
	require.Equal(t, int32(0), m[2].Res, "fsync: %v", m[2].Err())
	require.Equal(t, int32(0), m[3].Res, "fdatasync: %v", m[3].Err())
}

func TestFallocate(t *testing.T) {
	r := newRing(t, 8, nil)
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	r.GetSQE().PrepFallocate(fd, 0, 0, 1<<20)
	require.NoError(t, waitCQEs(t, r, 1)[0].Err())
	st, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(1<<20), st.Size())

	// KEEP_SIZE allocates blocks beyond the end without growing the file.
	r.GetSQE().PrepFallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 1<<20, 2<<20)
	require.NoError(t, waitCQEs(t, r, 1)[0].Err())
	var s unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &s))
	require.Equal(t, int64(1<<20), s.Size)
	require.GreaterOrEqual(t, s.Blocks*512, int64(3<<20))
}

func eventfd(t testing.TB) int {
	t.Helper()
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(efd) })
	return efd
}

func signal(efd int) error {
	var one [8]byte
	*(*uint64)(unsafe.Pointer(&one[0])) = 1
	_, err := unix.Write(efd, one[:])
	return err
}

// A read of an eventfd kept armed in the ring is how a sleeping owner is
// woken by another goroutine: the blocking wait must end when it fires.
func TestEventfdWakesBlockingWait(t *testing.T) {
	r := newRing(t, 8, nil)
	efd := eventfd(t)

	val := testenv.AlignedBuf(t, 8)
	sqe := r.GetSQE()
	sqe.PrepRead(efd, val, 0)
	sqe.UserData = 42
	sqe = r.GetSQE()
	sqe.PrepPollAdd(efd, unix.POLLIN)
	sqe.UserData = 43
	_, err := r.Submit()
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		done <- signal(efd)
	}()
	_, err = r.SubmitAndWait(1) // no timeout: only the eventfd can end it
	require.NoError(t, err)
	require.NoError(t, <-done)
	m := byUserData(t, waitCQEs(t, r, 2))
	require.Equal(t, int32(8), m[42].Res)
	require.Equal(t, uint64(1), *(*uint64)(unsafe.Pointer(&val[0])))
	require.NotZero(t, m[43].Res&unix.POLLIN)
}

func TestRegisterEventfd(t *testing.T) {
	r := newRing(t, 8, nil)
	efd := eventfd(t)
	require.NoError(t, r.RegisterEventfd(efd))
	r.GetSQE().PrepNop()
	waitCQEs(t, r, 1)
	var v [8]byte
	n, err := unix.Read(efd, v[:])
	require.NoError(t, err)
	require.Equal(t, 8, n)
	require.NotZero(t, *(*uint64)(unsafe.Pointer(&v[0])), "no completion was signalled")
	require.NoError(t, r.UnregisterEventfd())
}

func TestWaitTimeoutWithNoCompletions(t *testing.T) {
	r := newRing(t, 8, nil)
	start := time.Now()
	n, err := r.SubmitAndWaitTimeout(1, 30*time.Millisecond)
	require.NoError(t, err)
	require.Zero(t, n)
	require.GreaterOrEqual(t, time.Since(start), 25*time.Millisecond, "wait ended early")
	require.Zero(t, r.CQReady())
}

func TestTimeoutLinkTimeoutCancel(t *testing.T) {
	r := newRing(t, 16, nil)
	efd := eventfd(t) // never signalled: polls on it only end by timeout or cancel

	ts := &Timespec{Nsec: int64(5 * time.Millisecond)}
	sqe := r.GetSQE()
	sqe.PrepTimeout(ts, 0, 0)
	sqe.UserData = 1

	sqe = r.GetSQE()
	sqe.PrepPollAdd(efd, unix.POLLIN)
	sqe.Flags |= IOSQE_IO_LINK
	sqe.UserData = 2
	sqe = r.GetSQE()
	sqe.PrepLinkTimeout(ts, 0)
	sqe.UserData = 3

	sqe = r.GetSQE()
	sqe.PrepPollAdd(efd, unix.POLLIN)
	sqe.UserData = 4
	_, err := r.Submit()
	require.NoError(t, err)
	sqe = r.GetSQE()
	sqe.PrepCancel(4, 0)
	sqe.UserData = 5
	sqe = r.GetSQE()
	sqe.PrepCancel(999, 0)
	sqe.UserData = 6

	m := byUserData(t, waitCQEs(t, r, 6))
	require.ErrorIs(t, m[1].Err(), unix.ETIME)
	require.ErrorIs(t, m[2].Err(), unix.ECANCELED, "linked poll not cancelled by its timeout")
	require.ErrorIs(t, m[3].Err(), unix.ETIME)
	require.ErrorIs(t, m[4].Err(), unix.ECANCELED)
	require.NoError(t, m[5].Err())
	require.ErrorIs(t, m[6].Err(), unix.ENOENT)
	runtime.KeepAlive(ts)
}

// IOSQE_IO_DRAIN holds a request until everything submitted before it has
// completed.
func TestDrain(t *testing.T) {
	r := newRing(t, 8, nil)
	efd := eventfd(t)
	sqe := r.GetSQE()
	sqe.PrepPollAdd(efd, unix.POLLIN)
	sqe.UserData = 1
	sqe = r.GetSQE()
	sqe.PrepNop()
	sqe.Flags |= IOSQE_IO_DRAIN
	sqe.UserData = 2
	_, err := r.SubmitAndWaitTimeout(1, 20*time.Millisecond)
	require.NoError(t, err)
	require.Zero(t, r.CQReady(), "drained NOP completed before the poll ahead of it")
	require.NoError(t, signal(efd))
	cqes := waitCQEs(t, r, 2)
	require.Equal(t, uint64(1), cqes[0].UserData)
	require.Equal(t, uint64(2), cqes[1].UserData)
}

// More requests in flight than the CQ holds: the kernel keeps the excess on
// its overflow list and ReapCQEs must bring every one back.
func TestMoreInFlightThanCQEntries(t *testing.T) {
	for _, cfg := range []struct {
		name  string
		flags uint32
	}{{"default", 0}, {"taskrun-flag", IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG}} {
		t.Run(cfg.name, func(t *testing.T) {
			r := newRing(t, 8, &Params{Flags: cfg.flags, CQEntries: 16})
			require.Equal(t, uint32(16), r.CQEntries())
			require.True(t, r.Features().Has(IORING_FEAT_NODROP))
			const total = 200
			var got []CQE
			buf := make([]CQE, 7) // reap in odd-sized batches
			next := uint64(0)
			for next < total {
				for next < total {
					sqe := r.GetSQE()
					if sqe == nil {
						break
					}
					sqe.PrepNop()
					sqe.UserData = next
					next++
				}
				_, err := r.Submit()
				if errors.Is(err, ErrBusy) {
					k, rerr := r.ReapCQEs(buf)
					require.NoError(t, rerr)
					got = append(got, buf[:k]...)
					continue
				}
				require.NoError(t, err)
			}
			// The test is only worth something if the CQ overflowed.
			require.NotZero(t, atomic.LoadUint32(r.sqFlags)&IORING_SQ_CQ_OVERFLOW, "CQ never overflowed")
			for len(got) < total {
				k, err := r.ReapCQEs(buf)
				require.NoError(t, err)
				if k == 0 {
					break
				}
				got = append(got, buf[:k]...)
			}
			m := byUserData(t, got)
			require.Len(t, m, total, "completions lost")
			require.Zero(t, r.Overflow())
		})
	}
}

func TestShortReadAtEOF(t *testing.T) {
	r := newRing(t, 8, nil)
	path := filepath.Join(t.TempDir(), "short")
	data := make([]byte, 6000)
	fill(data, 3, 0)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	require.NoError(t, err)
	defer f.Close()

	buf := testenv.AlignedBuf(t, 2*blockSize)
	sqe := r.GetSQE()
	sqe.PrepRead(int(f.Fd()), buf, blockSize)
	sqe.UserData = 1
	sqe = r.GetSQE()
	sqe.PrepRead(int(f.Fd()), buf[blockSize:], 2*blockSize) // wholly past EOF
	sqe.UserData = 2
	m := byUserData(t, waitCQEs(t, r, 2))
	require.Equal(t, int32(6000-blockSize), m[1].Res, "short read at EOF")
	require.Equal(t, data[blockSize:], buf[:6000-blockSize])
	require.Equal(t, int32(0), m[2].Res, "read past EOF")
}

func TestDetect(t *testing.T) {
	info, err := Detect()
	if err != nil {
		testenv.Unavailable(t, "uring", err)
	}
	for _, op := range []Op{IORING_OP_NOP, IORING_OP_READ, IORING_OP_WRITE, IORING_OP_READ_FIXED, IORING_OP_FSYNC} {
		require.True(t, info.Probe.Supported(op), "%s", op)
	}
	s := info.String()
	require.Contains(t, s, "READ_FIXED")
	require.Contains(t, s, "NODROP")
	t.Log(s)
}

func TestSetupErrors(t *testing.T) {
	_, err := Setup(4, &Params{Flags: 1 << 30})
	require.ErrorIs(t, err, unix.EINVAL)
	require.True(t, strings.Contains(err.Error(), "not supported"), err.Error())

	r := newRing(t, 4, nil)
	require.NoError(t, r.Close())
	require.Error(t, r.Close())
}

// A misaligned O_DIRECT request completes with -EINVAL; with the file's
// alignment the error explains which field was wrong.
func TestMisalignedDirectEINVAL(t *testing.T) {
	r := newRing(t, 8, nil)
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	buf := testenv.AlignedBuf(t, 2*blockSize)
	fill(buf, 1, 0)
	r.GetSQE().PrepWrite(fd, buf, 0) // data, so the bad read is not cut short at EOF
	require.Equal(t, int32(2*blockSize), waitCQEs(t, r, 1)[0].Res)

	a, err := dio.ForFile(f)
	require.NoError(t, err)
	const off = 100
	r.GetSQE().PrepRead(fd, buf[:blockSize], off)
	c := waitCQEs(t, r, 1)[0]
	require.ErrorIs(t, c.Err(), unix.EINVAL)
	explained := dio.ExplainEINVAL("read", off, blockSize, uintptr(unsafe.Pointer(&buf[0])), a)
	require.ErrorIs(t, explained, unix.EINVAL)
	require.Contains(t, explained.Error(), "offset 100 is not a multiple of")
}

// A signal that interrupts the wait after the same io_uring_enter
// submitted something makes the kernel return the submitted count, not
// EINTR; SubmitAndWait must wait on until the completion it asked for is
// in the CQ. The Go runtime sends such signals (SIGURG, to preempt) at
// any time.
func TestSignalDoesNotEndWait(t *testing.T) {
	for _, timeout := range []time.Duration{-1, 300 * time.Millisecond} {
		r := newRing(t, 8, nil)
		var p [2]int
		require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC))
		t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
		buf := make([]byte, 16)
		sqe := r.GetSQE()
		sqe.PrepRead(p[0], buf, 0)
		sqe.UserData = 7

		tid := make(chan int, 1)
		type result struct {
			n, ready int
			err      error
			took     time.Duration
		}
		done := make(chan result, 1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tid <- unix.Gettid()
			start := time.Now()
			var n int
			var err error
			if timeout < 0 {
				n, err = r.SubmitAndWait(1)
			} else {
				n, err = r.SubmitAndWaitTimeout(1, timeout)
			}
			done <- result{n, int(r.CQReady()), err, time.Since(start)}
		}()
		id := <-tid
		for range 10 {
			time.Sleep(10 * time.Millisecond)
			require.NoError(t, unix.Tgkill(unix.Getpid(), id, unix.SIGURG))
		}
		if timeout < 0 {
			select {
			case res := <-done:
				t.Fatalf("SubmitAndWait(1) returned with %d completions after signals: %+v", res.ready, res)
			case <-time.After(50 * time.Millisecond):
			}
			_, err := unix.Write(p[1], []byte("x"))
			require.NoError(t, err)
			res := <-done
			require.NoError(t, res.err)
			require.Equal(t, 1, res.ready)
			c := waitCQEs(t, r, 1)
			require.Equal(t, uint64(7), c[0].UserData)
			require.Equal(t, int32(1), c[0].Res)
		} else {
			res := <-done
			require.NoError(t, res.err)
			require.Zero(t, res.ready)
			require.GreaterOrEqual(t, res.took, timeout-5*time.Millisecond, "the wait ended early: %+v", res)
			_, err := unix.Write(p[1], []byte("x"))
			require.NoError(t, err)
			waitCQEs(t, r, 1)
		}
	}
}
