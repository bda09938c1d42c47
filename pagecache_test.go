//go:build linux

package diskio

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

// reqCounter is a sched.Tracer counting what went where.
type reqCounter struct {
	enters    atomic.Int64 // io_uring_enter calls
	nowait    atomic.Int64 // page-cache attempts (RWF_NOWAIT)
	nowaitHit atomic.Int64 // ... that transferred something
	queued    atomic.Int64 // requests through the loop (not inline)
	inline    atomic.Int64 // requests on the idle fast path (not nowait)
}

func (c *reqCounter) SyscallDone(ev sched.SyscallEvent) {
	if ev.Call == sched.SysURingEnter {
		c.enters.Add(1)
	}
}

func (c *reqCounter) RequestDone(ev sched.RequestEvent) {
	switch {
	case ev.Nowait:
		c.nowait.Add(1)
		if ev.N > 0 {
			c.nowaitHit.Add(1)
		}
	case ev.Inline:
		c.inline.Add(1)
	default:
		c.queued.Add(1)
	}
}

// pageCacheFile writes n bytes of random data to a new file with os.File
// (so they are in the page cache) and returns its path and contents.
func pageCacheFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	path := filepath.Join(t.TempDir(), "cached")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path, data
}

func uringSched(t *testing.T, opts sched.Options) *sched.Scheduler {
	t.Helper()
	opts.Backend = sched.URing
	s, err := sched.New(opts)
	if err != nil {
		testenv.Unavailable(t, "uring", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPageCacheHitsStayOffTheRing: reads of a file in the page cache,
// from several goroutines, are all answered by the RWF_NOWAIT attempt on
// the caller's goroutine: no request reaches the scheduler and the ring
// sees no io_uring_enter at all.
func TestPageCacheHitsStayOffTheRing(t *testing.T) {
	noLeaks(t)
	c := &reqCounter{}
	s := uringSched(t, sched.Options{Tracer: c})
	path, data := pageCacheFile(t, 1<<20)
	f := openWith(t, path, os.O_RDONLY, WithScheduler(s), WithDirect(PageCache))
	require.False(t, f.Direct())
	require.True(t, f.nowait().Reads, f.nowait().String())

	time.Sleep(20 * time.Millisecond) // let the idle loop go to sleep in the kernel
	enters := c.enters.Load()
	const goroutines, reads = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			b := make([]byte, 4096+rng.IntN(3000))
			for range reads {
				off := rng.Int64N(int64(len(data) - len(b)))
				n, err := f.ReadAt(b, off)
				if err != nil || n != len(b) || !bytes.Equal(b, data[off:off+int64(n)]) {
					t.Errorf("ReadAt(%d bytes, %d) = %d, %v, or wrong bytes", len(b), off, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int64(0), c.queued.Load()+c.inline.Load(), "requests that left the caller")
	require.Equal(t, enters, c.enters.Load(), "io_uring_enter calls during the hits")
	require.Equal(t, int64(goroutines*reads), c.nowaitHit.Load())

	// The tail: a read across the end is a hit plus a zero-byte hit
	// (end of file), still without the ring.
	b := make([]byte, 8192)
	n, err := f.ReadAt(b, int64(len(data)-1000))
	require.Equal(t, 1000, n)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, data[len(data)-1000:], b[:n])
	require.Equal(t, int64(0), c.queued.Load()+c.inline.Load())
}

// TestPageCacheMissGoesThroughRing: with the file evicted, a read's
// RWF_NOWAIT attempt finds nothing and the read goes through the ring
// (NoInline: the idle fast path would take a lone request), and the bytes
// are right; while reads miss, most skip the attempt, and a probe finds the
// page once it is cached, after which re-reads are hits.
func TestPageCacheMissGoesThroughRing(t *testing.T) {
	noLeaks(t)
	c := &reqCounter{}
	s := uringSched(t, sched.Options{Tracer: c, NoInline: true})
	path, data := pageCacheFile(t, 4<<20)
	require.NoError(t, bench.Evict(path))
	f := openWith(t, path, os.O_RDONLY, WithScheduler(s), WithDirect(PageCache))
	require.NoError(t, f.Advise(0, 0, AdviceRandom)) // read only what is asked for

	b := make([]byte, 4096)
	for _, off := range []int64{3 << 20, 1 << 20, 12345} {
		n, err := f.ReadAt(b, off)
		require.NoError(t, err)
		require.Equal(t, data[off:off+int64(n)], b[:n])
	}
	// Eviction is the kernel's to do: a page it kept is a hit. So is a
	// page it read in within the attempt itself (RWF_NOWAIT submits the
	// read-ahead, and a disk the host caches can complete it before the
	// kernel looks again: on 2026-11-27's VM, every evicted read of a run
	// now and then).
	if c.queued.Load() == 0 {
		t.Skip("the kernel served every evicted read within RWF_NOWAIT: no miss to follow here")
	}
	require.Equal(t, int64(3), c.queued.Load()+c.nowaitHit.Load())
	// The file now counts as cold: reads skip the page-cache attempt
	// but one in coldProbe, so within coldProbe re-reads the page is
	// found, and from then on every read is a hit off the ring.
	for range coldProbe {
		n, err := f.ReadAt(b, 1<<20)
		require.NoError(t, err)
		require.Equal(t, data[1<<20:1<<20+n], b[:n])
	}
	require.LessOrEqual(t, c.queued.Load(), int64(3+coldProbe-1), "the probe found the page")
	require.Positive(t, c.nowaitHit.Load())
	queued, hits := c.queued.Load(), c.nowaitHit.Load()
	for range 10 {
		n, err := f.ReadAt(b, 1<<20)
		require.NoError(t, err)
		require.Equal(t, data[1<<20:1<<20+n], b[:n])
	}
	require.Equal(t, queued, c.queued.Load(), "re-reads of a cached page are hits")
	require.Equal(t, hits+10, c.nowaitHit.Load())
	require.True(t, f.nowait().Reads)
}

// TestPageCacheUntraced: with no Tracer and no FaultInjector a hit takes
// ReadAtNowait's short path; misses, partial hits (the cached head of a
// range, the rest from the disk), ranges larger than a raw attempt and the
// end of the file all still read the right bytes, and the File turns cold
// on a miss and warm again once its reads hit.
func TestPageCacheUntraced(t *testing.T) {
	noLeaks(t)
	s := uringSched(t, sched.Options{})
	path, data := pageCacheFile(t, 4<<20)
	f := openWith(t, path, os.O_RDONLY, WithScheduler(s), WithDirect(PageCache))
	require.NoError(t, f.Advise(0, 0, AdviceRandom)) // read only what is asked for
	check := func(off int64, n int) {
		t.Helper()
		b := make([]byte, n)
		got, err := f.ReadAt(b, off)
		want := min(int64(n), int64(len(data))-off)
		require.Equal(t, int(want), got)
		if want < int64(n) {
			require.ErrorIs(t, err, io.EOF)
		} else {
			require.NoError(t, err)
		}
		require.True(t, bytes.Equal(data[off:off+want], b[:got]), "ReadAt(%d bytes, %d)", n, off)
	}
	check(12345, 4096) // hot
	require.False(t, f.handle.Missed())
	check(int64(len(data))-100, 4096) // across the end
	check(1000, 200<<10)              // larger than one raw attempt

	// A miss: through the ring. The kernel may still serve it within
	// the page-cache attempt (RWF_NOWAIT submits the read-ahead, which a
	// fast disk can complete before the kernel looks again: 7 runs in 30
	// on 2026-11-27), so evict and read again until one is a miss.
	untilMiss(t, func() bool {
		require.NoError(t, bench.Evict(path))
		check(2<<20, 4096)
		return f.handle.Missed()
	})
	for i := range coldProbe + 1 {
		check(2<<20, 4096) // re-reads: the probe finds the page
		if !f.handle.Missed() {
			break
		}
		require.Less(t, i, coldProbe, "the file stays cold")
	}
	require.False(t, f.handle.Missed(), "a hit makes the file warm again")
	// The cached page at 2 MiB is the head of a longer range: a short
	// hit, then the rest through the ring (dropped first: under load the
	// kernel may have brought some of it in meanwhile).
	untilMiss(t, func() bool { // a hit as above: again
		require.NoError(t, unix.Fadvise(int(f.Fd()), 2<<20+4096, 64<<10, unix.FADV_DONTNEED))
		check(2<<20+100, 64<<10)
		return f.handle.Missed()
	})
	require.True(t, f.nowait().Reads)
}

// untilMiss repeats read, which evicts pages and reads them and reports
// whether that was a miss, until it is one. The kernel may serve an
// evicted page within the page-cache attempt (RWF_NOWAIT submits the
// read-ahead, which a fast disk completes before the kernel looks again);
// after 33 such hits the test is skipped: there is no miss to follow.
func untilMiss(t *testing.T, read func() bool) {
	t.Helper()
	for range 33 {
		if read() {
			return
		}
	}
	t.Skip("the kernel served 33 evicted reads within RWF_NOWAIT: no miss to follow here")
}

// ringFds returns the process's io_uring descriptors.
func ringFds(t *testing.T) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	fds := map[string]bool{}
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:[io_uring]" {
			fds[e.Name()] = true
		}
	}
	return fds
}

// sqTail is the kernel's count of entries submitted to the ring on fd
// (SqTail in /proc/self/fdinfo: it sees submissions without a Tracer).
func sqTail(t *testing.T, fd string) uint32 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/fdinfo/" + fd)
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "SqTail:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			require.NoError(t, err)
			return uint32(n)
		}
	}
	t.Skip("no SqTail in io_uring's fdinfo (kernel before 5.15?)")
	return 0
}

// TestPageCacheUntracedHitsStayOffTheRing: without a Tracer (the short
// path), hits from 8 goroutines submit nothing to the scheduler's ring,
// as the kernel counts it; a miss does.
func TestPageCacheUntracedHitsStayOffTheRing(t *testing.T) {
	noLeaks(t)
	before := ringFds(t)
	s := uringSched(t, sched.Options{NoInline: true})
	var ring string
	for fd := range ringFds(t) {
		if !before[fd] {
			require.Empty(t, ring, "more than one new ring")
			ring = fd
		}
	}
	require.NotEmpty(t, ring, "the scheduler's ring descriptor")
	path, data := pageCacheFile(t, 1<<20)
	f := openWith(t, path, os.O_RDONLY, WithScheduler(s), WithDirect(PageCache))
	time.Sleep(20 * time.Millisecond) // the loop's start-up submissions are done
	tail := sqTail(t, ring)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 5))
			b := make([]byte, 4096)
			for range 500 {
				off := rng.Int64N(int64(len(data) - len(b)))
				if n, err := f.ReadAt(b, off); err != nil || n != len(b) || !bytes.Equal(b, data[off:off+int64(n)]) {
					t.Errorf("ReadAt(%d) = %d, %v, or wrong bytes", off, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, tail, sqTail(t, ring), "ring submissions during 4,000 hits")

	require.NoError(t, f.Advise(0, 0, AdviceRandom))
	// The kernel may serve a miss within the page-cache attempt (see
	// TestPageCacheUntraced): evict and read again until one goes
	// through the ring.
	b := make([]byte, 4096)
	untilMiss(t, func() bool {
		require.NoError(t, bench.Evict(path))
		n, err := f.ReadAt(b, 512<<10)
		require.NoError(t, err)
		require.Equal(t, data[512<<10:512<<10+n], b[:n])
		return sqTail(t, ring) != tail
	})
}

// nowaitInjector answers page-cache attempts with fn and counts every
// attempt; it is called from callers' goroutines, so it locks.
type nowaitInjector struct {
	mu    sync.Mutex
	fn    func(a sched.Attempt) sched.Fault
	log   []sched.Attempt
	count map[bool]int // by nowait
}

func (in *nowaitInjector) Fault(a sched.Attempt) sched.Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.log = append(in.log, a)
	if in.count == nil {
		in.count = map[bool]int{}
	}
	nowait := a.Flags&unix.RWF_NOWAIT != 0
	in.count[nowait]++
	if nowait && in.fn != nil {
		return in.fn(a)
	}
	return sched.Fault{}
}

func (in *nowaitInjector) nowaits() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.count[true]
}

func (in *nowaitInjector) setFn(fn func(a sched.Attempt) sched.Fault) {
	in.mu.Lock()
	in.fn = fn
	in.mu.Unlock()
}

func (in *nowaitInjector) attempts() []sched.Attempt {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]sched.Attempt(nil), in.log...)
}

// TestPageCacheEAGAINContinues: an injected EAGAIN on the page-cache
// attempt sends the whole read through the ring, from the same offset.
func TestPageCacheEAGAINContinues(t *testing.T) {
	noLeaks(t)
	in := &nowaitInjector{fn: func(sched.Attempt) sched.Fault { return sched.Fault{Errno: unix.EAGAIN} }}
	s := uringSched(t, sched.Options{Faults: in, NoInline: true}) // the ring, not the idle fast path
	path, data := pageCacheFile(t, 256<<10)
	f := openWith(t, path, os.O_RDONLY, WithScheduler(s), WithDirect(PageCache))
	b := make([]byte, 10000)
	n, err := f.ReadAt(b, 777)
	require.NoError(t, err)
	require.Equal(t, data[777:777+n], b[:n])
	log := in.attempts()
	require.Len(t, log, 2)
	require.Equal(t, sched.Attempt{Op: sched.OpRead, Fd: log[0].Fd, Off: 777, Len: 10000, Flags: unix.RWF_NOWAIT, Path: sched.PathPageCache}, log[0])
	require.Equal(t, sched.Attempt{Op: sched.OpRead, Fd: log[0].Fd, Off: 777, Len: 10000, Path: sched.PathQueue}, log[1])
	require.True(t, f.nowait().Reads, "EAGAIN is not a refusal")
}

// TestPageCacheShortContinues: a short page-cache result is continued
// from where it stopped: by another page-cache attempt (the kernel may
// stop early, preadv2(2) BUGS), and through the ring once that attempt
// finds nothing.
func TestPageCacheShortContinues(t *testing.T) {
	noLeaks(t)
	var nth atomic.Int64
	in := &nowaitInjector{fn: func(a sched.Attempt) sched.Fault {
		switch nth.Add(1) {
		case 1:
			return sched.Fault{Short: 4096} // the 5.9/5.10 kernels' one page
		case 2:
			return sched.Fault{Short: 1000}
		}
		return sched.Fault{Errno: unix.EAGAIN}
	}}
	s := faultSched(t, in)
	path, data := pageCacheFile(t, 256<<10)
	f := openWith(t, path, os.O_RDONLY, WithScheduler(s), WithDirect(PageCache))
	b := make([]byte, 64<<10)
	n, err := f.ReadAt(b, 100)
	require.NoError(t, err)
	require.Equal(t, len(b), n)
	require.Equal(t, data[100:100+n], b)
	log := in.attempts()
	require.Len(t, log, 4)
	offs := []int64{100, 100 + 4096, 100 + 4096 + 1000, 100 + 4096 + 1000}
	for i, a := range log {
		require.Equal(t, offs[i], a.Off, "attempt %d", i)
		require.Equal(t, i < 3, a.Flags&unix.RWF_NOWAIT != 0, "attempt %d", i)
		require.Equal(t, len(b)-int(offs[i]-100), a.Len, "attempt %d", i)
	}

	// Short at the end of the file: the next attempt returns 0 and the
	// read ends there, without the ring.
	// Only real results from here, on a File not made cold by the EAGAIN.
	in.setFn(nil)
	f = openWith(t, path, os.O_RDONLY, WithScheduler(s), WithDirect(PageCache))
	before := len(in.attempts())
	n, err = f.ReadAt(b, int64(len(data)-5000))
	require.Equal(t, 5000, n)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, data[len(data)-5000:], b[:n])
	for _, a := range in.attempts()[before:] {
		require.NotZero(t, a.Flags&unix.RWF_NOWAIT, "the end of the file was found without the ring: %+v", a)
	}
}

// TestPageCacheNowaitRefused: where the kernel refuses RWF_NOWAIT
// (injected EOPNOTSUPP), the read and the write still succeed through the
// ring, the file stops trying after the first refusal, and Nowait says
// why.
func TestPageCacheNowaitRefused(t *testing.T) {
	noLeaks(t)
	in := &nowaitInjector{fn: func(sched.Attempt) sched.Fault { return sched.Fault{Errno: unix.EOPNOTSUPP} }}
	s := faultSched(t, in)
	path, data := pageCacheFile(t, 64<<10)
	f := openWith(t, path, os.O_RDWR, WithScheduler(s), WithDirect(PageCache))
	st := f.nowait()
	require.True(t, st.Reads)
	require.True(t, st.Writes)
	b := make([]byte, 3000)
	for range 3 {
		n, err := f.ReadAt(b, 10)
		require.NoError(t, err)
		require.Equal(t, data[10:10+n], b[:n])
	}
	st = f.nowait()
	require.False(t, st.Reads)
	require.Contains(t, st.ReadsReason, "preadv2(RWF_NOWAIT)")
	require.Contains(t, st.ReadsReason, unix.EOPNOTSUPP.Error())
	require.Equal(t, 1, in.nowaits(), "one refused attempt, then none")

	w := bytes.Repeat([]byte("w"), 5000)
	for i := range 3 {
		_, err := f.WriteAt(w, int64(i*100))
		require.NoError(t, err)
		copy(data[i*100:], w)
	}
	st = f.nowait()
	require.False(t, st.Writes)
	require.Contains(t, st.WritesReason, "pwritev2(RWF_NOWAIT)")
	require.Equal(t, 2, in.nowaits(), "one refused write attempt, then none")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, data, got)
	require.Contains(t, st.String(), "reads inline: no (")
}

// TestPageCacheNowaitWriteRefusalShared: once a File's RWF_NOWAIT write
// is refused, the scheduler's later Files make no such attempt (a journal
// created per transaction would pay a failed system call each), and their
// writes still land.
func TestPageCacheNowaitWriteRefusalShared(t *testing.T) {
	in := &nowaitInjector{fn: func(a sched.Attempt) sched.Fault {
		if a.Op == sched.OpWrite {
			return sched.Fault{Errno: unix.EOPNOTSUPP}
		}
		return sched.Fault{}
	}}
	s := faultSched(t, in)
	dir := t.TempDir()
	first := openWith(t, filepath.Join(dir, "a"), os.O_RDWR|os.O_CREATE, WithScheduler(s), WithDirect(PageCache))
	_, err := first.WriteAt([]byte("first"), 100)
	require.NoError(t, err)
	require.Equal(t, 1, in.nowaits(), "the first File tries once")
	require.Contains(t, first.nowait().WritesReason, unix.EOPNOTSUPP.Error())

	for i := range 3 {
		name := filepath.Join(dir, "j"+strconv.Itoa(i))
		f := openWith(t, name, os.O_RDWR|os.O_CREATE, WithScheduler(s), WithDirect(PageCache))
		require.False(t, f.nowait().Writes)
		require.Contains(t, f.nowait().WritesReason, "earlier file of this scheduler")
		_, err := f.WriteAt([]byte("journal"), 512)
		require.NoError(t, err)
		got, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, append(make([]byte, 512), "journal"...), got)
	}
	require.Equal(t, 1, in.nowaits(), "later Files made no RWF_NOWAIT write")

	// Another scheduler has learnt nothing.
	in2 := &nowaitInjector{}
	other := openWith(t, filepath.Join(dir, "b"), os.O_RDWR|os.O_CREATE, WithScheduler(faultSched(t, in2)), WithDirect(PageCache))
	require.True(t, other.nowait().Writes)
}

// TestPageCacheWrites: buffered writes on this machine's filesystem
// (inline where it takes RWF_NOWAIT writes, else through the ring) land,
// extend the file, Sync, and a failed flush is sticky as for direct
// files; an O_DSYNC file never tries writes inline.
func TestPageCacheWrites(t *testing.T) {
	noLeaks(t)
	in := &nowaitInjector{}
	s := faultSched(t, in)
	path := filepath.Join(t.TempDir(), "w")
	f := openWith(t, path, os.O_RDWR|os.O_CREATE, WithScheduler(s), WithDirect(PageCache))
	want := make([]byte, 0, 1<<20)
	for i := range 100 {
		p := bytes.Repeat([]byte{byte(i)}, 1000+i*7)
		n, err := f.Write(p)
		require.NoError(t, err)
		require.Equal(t, len(p), n)
		want = append(want, p...)
	}
	require.NoError(t, f.Sync())
	fi, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(len(want)), fi.Size())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, got)
	st := f.nowait()
	t.Logf("%s", st)
	if !st.Writes {
		require.Contains(t, st.WritesReason, "pwritev2(RWF_NOWAIT)")
		require.Equal(t, 1, in.nowaits(), "refused once, then never tried")
	}

	// A failed flush is sticky: later writes and syncs fail with it.
	s2 := faultSched(t, sched.FaultFunc(func(a sched.Attempt) sched.Fault {
		if a.Op == sched.OpFsync || a.Op == sched.OpFdatasync {
			return sched.Fault{Errno: unix.EIO}
		}
		return sched.Fault{}
	}))
	g := openWith(t, path, os.O_RDWR, WithScheduler(s2), WithDirect(PageCache))
	_, err = g.WriteAt([]byte("x"), 5)
	require.NoError(t, err)
	require.ErrorIs(t, g.Sync(), unix.EIO)
	_, err = g.WriteAt([]byte("y"), 6)
	require.ErrorIs(t, err, unix.EIO)

	d := openWith(t, path, os.O_RDWR|unix.O_DSYNC, WithScheduler(s), WithDirect(PageCache))
	_, err = d.WriteAt([]byte("z"), 7)
	require.NoError(t, err)
	require.False(t, d.nowait().Writes)
	require.Contains(t, d.nowait().WritesReason, "O_DSYNC")
}

// TestPrefetchAndAdvise: Advise(DontNeed) drops the file's cached pages
// and Prefetch brings them back without a read, as mincore(2) on a
// mapping of the file sees them (it looks without reading).
func TestPrefetchAndAdvise(t *testing.T) {
	noLeaks(t)
	s := uringSched(t, sched.Options{})
	const size = 1 << 20
	path, _ := pageCacheFile(t, size)
	f := openWith(t, path, os.O_RDWR, WithScheduler(s), WithDirect(PageCache))
	require.NoError(t, f.Sync())
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(m)
	resident := func() int {
		vec := make([]byte, size/os.Getpagesize())
		_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
		require.Zero(t, e)
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n
	}
	pages := size / os.Getpagesize()
	waitFor := func(what string, ok func(int) bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for n := resident(); !ok(n); n = resident() {
			require.True(t, time.Now().Before(deadline), "%s: %d of %d pages resident", what, n, pages)
			time.Sleep(time.Millisecond)
		}
	}
	require.NoError(t, f.Advise(0, 0, AdviceDontNeed))
	waitFor("after Advise(DontNeed)", func(n int) bool { return n < pages/4 })
	require.NoError(t, f.Prefetch(0, size))
	waitFor("after Prefetch", func(n int) bool { return n == pages })

	var pe *os.PathError
	require.ErrorAs(t, f.Prefetch(-1, 10), &pe)
	require.ErrorAs(t, f.Advise(0, 10, Advice(99)), &pe)
	require.ErrorIs(t, pe.Err, unix.EINVAL)
	require.NoError(t, f.Close())
	require.ErrorIs(t, f.Prefetch(0, 10), os.ErrClosed)
	require.ErrorIs(t, f.Advise(0, 10, AdviceNormal), os.ErrClosed)
}

// TestNowaitAfterClose: page-cache attempts on a closed scheduler fail
// with ErrClosed, as its other calls do.
func TestNowaitAfterClose(t *testing.T) {
	s, err := sched.New(sched.Options{})
	require.NoError(t, err)
	path, _ := pageCacheFile(t, 8192)
	osf, err := os.Open(path)
	require.NoError(t, err)
	defer osf.Close()
	h, err := s.Open(int(osf.Fd()), path)
	require.NoError(t, err)
	b := make([]byte, 100)
	n, err := h.ReadAtNowait(b, 0)
	require.NoError(t, err)
	require.Equal(t, 100, n)
	require.NoError(t, s.Close())
	_, err = h.ReadAtNowait(b, 0)
	require.True(t, errors.Is(err, sched.ErrClosed))
	require.False(t, strings.Contains(err.Error(), "nowait"))
}

// TestPageCacheWriteTo: io.Copy out of a page-cache File (its WriteTo)
// copies from the cursor to the end, in chunks larger and smaller than
// the file, and moves the cursor to the end.
func TestPageCacheWriteTo(t *testing.T) {
	for _, size := range []int{0, 1000, 256 << 10, 1<<20 + 4097} {
		path := filepath.Join(t.TempDir(), "f")
		data := randomBytes(size, byte(size%251+1))
		require.NoError(t, os.WriteFile(path, data, 0o644))
		f, err := OpenFile(path, os.O_RDONLY, 0, WithDirect(PageCache))
		require.NoError(t, err)
		start := min(int64(size), 77)
		_, err = f.Seek(start, io.SeekStart)
		require.NoError(t, err)
		var out bytes.Buffer
		n, err := io.Copy(&out, f)
		require.NoError(t, err)
		require.Equal(t, int64(size)-start, n)
		require.True(t, bytes.Equal(data[start:], out.Bytes()), "size %d", size)
		pos, err := f.Seek(0, io.SeekCurrent)
		require.NoError(t, err)
		require.Equal(t, int64(size), pos)
		require.NoError(t, f.Close())
	}
}

// TestPageCacheAppendsInline: where the kernel refuses RWF_NOWAIT writes
// (injected here, as ext4 does), small writes that read nothing (appends
// to a new file: the tail page cached, the rest past the size) are copied
// on the caller, as os.File does, with no request through the scheduler;
// a write whose partial page holds old data not cached (a recycled log)
// still goes through it, and every byte lands.
func TestPageCacheAppendsInline(t *testing.T) {
	noLeaks(t)
	var c reqCounter
	in := &nowaitInjector{fn: func(sched.Attempt) sched.Fault { return sched.Fault{Errno: unix.EOPNOTSUPP} }}
	// NoInline: a request through the scheduler is one through the loop,
	// which the counter tells apart from a copy on the caller.
	s := uringSched(t, sched.Options{Tracer: &c, Faults: in, NoInline: true})
	path := filepath.Join(t.TempDir(), "wal")
	f := openWith(t, path, os.O_RDWR|os.O_CREATE, WithScheduler(s), WithDirect(PageCache))
	rng := rand.New(rand.NewPCG(5, 6))
	var want []byte
	for range 500 {
		rec := make([]byte, 1+rng.IntN(3000))
		for i := range rec {
			rec[i] = byte(rng.Uint32())
		}
		_, err := f.Write(rec)
		require.NoError(t, err)
		want = append(want, rec...)
	}
	queued := c.queued.Load()
	t.Logf("500 appends: %d requests through the scheduler", queued)
	require.LessOrEqual(t, queued, int64(1), "appends that read nothing are copies on the caller")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, got)

	// Old data out of the page cache: an unaligned overwrite would read
	// it, so it goes through the scheduler.
	require.NoError(t, f.Datasync())
	require.NoError(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
	before := c.queued.Load()
	_, err = f.WriteAt([]byte("over old data"), 5000)
	require.NoError(t, err)
	copy(want[5000:], "over old data")
	require.Greater(t, c.queued.Load(), before)
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, got)
}
