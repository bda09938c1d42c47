//go:build linux

package sched

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/testenv"
)

// busy keeps one read in flight in s's loop (from an empty pipe, which
// io_uring polls without a worker) until the returned function ends it,
// so that s's later requests do not take the idle fast path.
func busy(t testing.TB, s *Scheduler) (end func()) {
	t.Helper()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	buf := make([]byte, 1)
	c := s.StartReadAt(int(pr.Fd()), buf, 0)
	require.Eventually(t, func() bool { return s.active.Load() > 0 && !c.Ready() }, 5*time.Second, time.Millisecond)
	return func() {
		_, err := pw.Write([]byte{1})
		require.NoError(t, err)
		n, err := c.Wait()
		require.NoError(t, err)
		require.Equal(t, 1, n)
		pr.Close()
		pw.Close()
	}
}

// With requests in flight, what io_uring would hand to a worker runs on
// its caller: syncs, fallocate and unlink always, and a classified (here background)
// write the kernel cannot start without blocking (one that extends an
// O_DIRECT file on ext4) after the ring said so (RWF_NOWAIT). The loop
// never locks to its thread (it locks before the first request that may
// go to a worker), so the process has no template thread and no workers.
// An unclassified write that would block goes to a worker, and locks the
// loop; from then on syncs go to the workers too. With NoInline, every one
// of them goes through the ring.
func TestWorkOnCaller(t *testing.T) {
	for _, noInline := range []bool{false, true} {
		s := newSched(t, URing, Options{NoInline: noInline})
		end := busy(t, s)
		f := testenv.DirectFile(t)
		fd := int(f.Fd())
		buf := testenv.AlignedBuf(t, 4*blockSize)
		fill(buf, 7)

		inline := func() uint64 { return s.Stats().Inline }
		before := inline()
		n, err := s.WriteAtClass(fd, buf, 0, Background) // extends the file
		require.NoError(t, err)
		require.Equal(t, len(buf), n)
		extending := inline() - before
		require.NoError(t, s.Fdatasync(fd))
		require.NoError(t, s.Fsync(fd))
		require.NoError(t, s.Fallocate(fd, 0, 0, int64(8*blockSize)))
		other := filepath.Join(t.TempDir(), "gone")
		require.NoError(t, os.WriteFile(other, []byte("x"), 0o600))
		require.NoError(t, s.Unlinkat(unix.AT_FDCWD, other, 0))
		_, err = os.Stat(other)
		require.ErrorIs(t, err, os.ErrNotExist)
		blocking := inline() - before - extending

		got := testenv.AlignedBuf(t, len(buf))
		n, err = s.ReadAt(fd, got, 0)
		require.NoError(t, err)
		require.Equal(t, len(buf), n)
		require.True(t, bytes.Equal(buf, got), "bytes read back differ")
		locked := s.locked.Load()

		// An unclassified extending write: through the ring.
		mid := inline()
		n, err = s.WriteAt(fd, buf, int64(8*blockSize))
		require.NoError(t, err)
		require.Equal(t, len(buf), n)
		require.Equal(t, mid, inline(), "an unclassified write was made on its caller")
		require.True(t, s.locked.Load(), "an unclassified write that may go to a worker left the loop unlocked")
		// The ring has its worker pool now: syncs go there.
		require.NoError(t, s.Fsync(fd))
		require.Equal(t, mid, inline(), "a sync was made on its caller beside the ring's workers")
		end()

		if noInline {
			require.Zero(t, extending+blocking, "NoInline: nothing on the caller")
			require.True(t, s.locked.Load(), "NoInline: the loop did not lock for the ring's workers")
			continue
		}
		require.EqualValues(t, 1, extending, "the extending background write was not made on its caller")
		require.EqualValues(t, 4, blocking, "syncs, fallocate and unlink on callers")
		require.False(t, locked, "the loop locked: something went to a worker")
	}
}

// A write the ring makes without blocking stays there: an O_DIRECT
// overwrite of written blocks.
func TestOverwriteStaysInRing(t *testing.T) {
	s := newSched(t, URing, Options{})
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	h := classed(t, s, fd, Background)
	buf := testenv.AlignedBuf(t, 4*blockSize)
	fill(buf, 1)
	_, err := h.WriteAt(buf, 0)
	require.NoError(t, err)
	require.NoError(t, h.Fdatasync())
	end := busy(t, s)
	defer end()
	before := s.Stats().Inline
	fill(buf, 2)
	n, err := h.WriteAt(buf, 0)
	require.NoError(t, err)
	require.Equal(t, len(buf), n)
	if s.Stats().Inline != before {
		// The filesystem refused the overwrite without blocking:
		// correct, merely not asynchronous.
		t.Skipf("this filesystem cannot overwrite O_DIRECT without blocking (%s)", os.TempDir())
	}
	got := testenv.AlignedBuf(t, len(buf))
	_, err = h.ReadAt(got, 0)
	require.NoError(t, err)
	require.True(t, bytes.Equal(buf, got))
	require.False(t, s.locked.Load())
}

// Once a classified write to a file has come back from the ring, the
// file's next writes go to their callers without trying the ring, but for
// one in nowaitProbe; giving the descriptor its class again (a new file
// on it) starts over.
func TestBlockedWritesSkipRing(t *testing.T) {
	rec := &recorder{}
	s := newSched(t, URing, Options{Tracer: rec})
	end := busy(t, s)
	defer end()
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	h := classed(t, s, fd, Background)
	buf := testenv.AlignedBuf(t, blockSize)
	writes := func() []RequestEvent {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		var ws []RequestEvent
		for _, ev := range rec.requests {
			if ev.Op == OpWrite && int(ev.Fd) == fd {
				ws = append(ws, ev)
			}
		}
		return ws
	}
	for i := range nowaitProbe {
		fill(buf, i)
		n, err := h.WriteAt(buf, int64(i)*blockSize) // extends the file
		require.NoError(t, err)
		require.Equal(t, blockSize, n)
	}
	ws := writes()
	require.Len(t, ws, nowaitProbe)
	for i, ev := range ws {
		require.True(t, ev.Inline, "write %d: an extending write was made in the ring", i)
		tried := ev.Submits > 1 // the ring's, then its caller's
		require.Equal(t, i == 0 || i == nowaitProbe-1, tried, "write %d: tried in the ring", i)
	}
	got := testenv.AlignedBuf(t, blockSize)
	_, err := h.ReadAt(got, 7*blockSize)
	require.NoError(t, err)
	fill(buf, 7)
	require.True(t, bytes.Equal(buf, got))

	// The descriptor classified again: overwrites are tried in the ring,
	// where they stay.
	require.NoError(t, h.SetClass(Background))
	for i := range 2 {
		fill(buf, 100+i)
		_, err := h.WriteAt(buf, 0)
		require.NoError(t, err)
		ev := writes()[nowaitProbe+i]
		if ev.Inline {
			require.Greater(t, ev.Submits, int32(1), "overwrite %d not tried in the ring", i)
			t.Skipf("this filesystem cannot overwrite O_DIRECT without blocking (%s)", os.TempDir())
		}
	}
	require.False(t, s.locked.Load())
}

// A slot for blocking work freed while requests wait goes to the first
// latency-class waiter, then to syncs, then to writes, each in arrival
// order; a slot is never free while a request that may take it waits.
// Writes hold all slots but one, which stays for syncs.
func TestPlaceQueueOrder(t *testing.T) {
	s := newSched(t, URing, Options{IOWQMaxWorkers: 2})
	require.Len(t, s.callerSlots, maxInline+2)
	fd := int32(10)
	req := func(op Op, c Class) *request {
		r := getRequest()
		fd++
		r.op, r.class, r.fd = op, c, fd // writes to other files
		return r
	}
	queued := func(r *request) bool {
		s.slotQueue.mu.Lock()
		defer s.slotQueue.mu.Unlock()
		for k := range s.slotQueue.waiting {
			for q := s.slotQueue.waiting[k].first; q != nil; q = q.next {
				if q == r {
					return true
				}
			}
		}
		return false
	}
	got := make(chan string, 4)
	wait := func(name string, r *request) {
		go func() {
			p := s.awaitSlot(r)
			got <- name
			s.freeSlot(p)
		}()
		require.Eventually(t, func() bool { return queued(r) }, 5*time.Second, time.Millisecond)
	}

	held := []*callerSlot{s.awaitSlot(req(OpFsync, Background)), s.awaitSlot(req(OpFdatasync, Unclassified))}
	require.NotSame(t, held[0], held[1])
	wait("write 1", req(OpWrite, Background))
	wait("sync", req(OpFdatasync, Background))
	wait("write 2", req(OpWrite, Unclassified))
	wait("latency", req(OpFdatasync, Latency))
	s.freeSlot(held[0])
	for _, want := range []string{"latency", "sync", "write 1", "write 2"} {
		require.Equal(t, want, <-got)
	}
	s.freeSlot(held[1])

	// One write holds a slot: a second write waits though a slot is
	// free, and a sync takes that slot.
	w1 := s.awaitSlot(req(OpWrite, Unclassified))
	wait("write 3", req(OpWrite, Unclassified))
	sync := s.awaitSlot(req(OpFsync, Unclassified))
	require.NotSame(t, w1, sync)
	s.freeSlot(sync)
	select {
	case name := <-got:
		t.Fatalf("%s took the slot kept for syncs", name)
	case <-time.After(20 * time.Millisecond):
	}
	s.freeSlot(w1)
	require.Equal(t, "write 3", <-got)
	require.Eventually(t, func() bool {
		for i := maxInline; i < len(s.callerSlots); i++ {
			if s.callerSlots[i].busy.Load() {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond)
	s.slotQueue.mu.Lock()
	require.Zero(t, s.slotQueue.writes)
	s.slotQueue.mu.Unlock()
}

// Writes to one descriptor that come back from the ring run in one slot,
// one after another; writes to another descriptor take a slot of their
// own.
func TestWritesQueueBehindTheirFile(t *testing.T) {
	s := newSched(t, URing, Options{IOWQMaxWorkers: 4})
	w := func(fd int32) *request {
		r := getRequest()
		r.op, r.fd = OpWrite, fd
		return r
	}
	r1, r2, r3, r4 := w(5), w(5), w(6), w(5)
	p := s.awaitSlot(r1)
	require.NotNil(t, p)
	require.Nil(t, s.awaitSlot(r2), "a second write to fd 5 took a slot")
	p6 := s.awaitSlot(r3)
	require.NotNil(t, p6)
	require.NotSame(t, p, p6)
	require.Nil(t, s.awaitSlot(r4))
	require.Same(t, r2, s.nextWrite(p))
	require.Same(t, r4, s.nextWrite(p))
	require.Nil(t, s.nextWrite(p))
	require.False(t, p.busy.Load(), "the slot was not freed with its queue empty")
	require.Nil(t, s.nextWrite(p6))
	s.slotQueue.mu.Lock()
	require.Zero(t, s.slotQueue.writes)
	s.slotQueue.mu.Unlock()
}

// Many goroutines extending one O_DIRECT file of the background class
// and syncing it, with the scheduler busy, so that every write comes back
// from the ring and goes through one slot: every byte lands where it
// was written.
func TestConcurrentExtendingWrites(t *testing.T) {
	s := newSched(t, URing, Options{})
	end := busy(t, s)
	defer end()
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	h := classed(t, s, fd, Background)
	const writers, each = 32, 8
	done := make(chan error, writers)
	for g := range writers {
		go func() {
			buf := testenv.AlignedBuf(t, blockSize)
			for k := range each {
				fill(buf, g*each+k)
				off := int64(k*writers+g) * blockSize
				if _, err := h.WriteAt(buf, off); err != nil {
					done <- err
					return
				}
				if err := h.Fsync(); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range writers {
		require.NoError(t, <-done)
	}
	require.Positive(t, s.Stats().Inline, "no write came back to its caller")
	require.False(t, s.locked.Load())
	got := testenv.AlignedBuf(t, blockSize)
	want := make([]byte, blockSize)
	for g := range writers {
		for k := range each {
			_, err := h.ReadAt(got, int64(k*writers+g)*blockSize)
			require.NoError(t, err)
			fill(want, g*each+k)
			require.True(t, bytes.Equal(want, got), "block of writer %d, write %d", g, k)
		}
	}
}
