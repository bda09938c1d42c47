//go:build linux

package diskio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

// rssBytes is the process's resident set (/proc/self/statm).
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	require.NoError(t, err)
	pages, err := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
	require.NoError(t, err)
	return pages * int64(os.Getpagesize())
}

// TestDroppedBuffersReturned: 10,000 Buffers dropped without Release are
// found by the garbage collector, counted, and their off-heap memory given
// back: reading as many again reuses it, with no new memory.
func TestDroppedBuffersReturned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, randomBytes(1<<20, 1), 0o644))
	f, err := OpenFile(path, os.O_RDONLY, 0, WithDirect(Direct))
	require.NoError(t, err)
	defer f.Close()
	require.True(t, f.Direct())
	const n = 10000
	runtime.GC()
	before, rss0, allocs0 := DroppedBuffers(), rssBytes(t), f.sched().Stats().Buffers.Allocs
	// Hold them all first, so that none is recycled before the others
	// are read: the memory really grows by n blocks.
	bufs := make([]*Buffer, n)
	for i := range bufs {
		b, err := f.ReadBuffer(int64(i%256)*4096, 4096)
		require.NoError(t, err)
		require.Len(t, b.Bytes(), 4096)
		bufs[i] = b
	}
	rss1 := rssBytes(t)
	bufs = nil // dropped, never released
	deadline := time.Now().Add(20 * time.Second)
	for DroppedBuffers()-before < n && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	rss2 := rssBytes(t)
	t.Logf("RSS %d MB, holding %d Buffers %d MB, dropped %d MB; DroppedBuffers %d",
		rss0>>20, n, rss1>>20, rss2>>20, DroppedBuffers()-before)
	require.Equal(t, int64(n), DroppedBuffers()-before)
	// Most of the blocks are new (the pool may hold a few from earlier
	// tests), so the test can tell reuse from new memory below.
	require.Greater(t, f.sched().Stats().Buffers.Allocs-allocs0, uint64(n/2), "the reads did not take the memory the test expects")
	// The memory went back to the scheduler's read pool (64 MiB of it is
	// kept for reuse, not unmapped): reading and holding n Buffers again
	// takes no new memory and does not raise the RSS. Without the cleanup
	// every one of them would be a new block.
	allocs := f.sched().Stats().Buffers.Allocs
	for i := range n {
		b, err := f.ReadBuffer(int64(i%256)*4096, 4096)
		require.NoError(t, err)
		bufs = append(bufs, b)
	}
	rss3 := rssBytes(t)
	t.Logf("held again: RSS %d MB, new blocks %d", rss3>>20, f.sched().Stats().Buffers.Allocs-allocs)
	require.Zero(t, f.sched().Stats().Buffers.Allocs-allocs, "dropped Buffers' memory was not returned for reuse")
	require.Less(t, rss3-rss2, int64(10<<20), "holding the Buffers again grew the RSS")
	for _, b := range bufs {
		b.Release()
	}
	bufs = nil
	// Released Buffers are not counted.
	b, err := f.ReadBuffer(0, 10)
	require.NoError(t, err)
	b.Release()
	b = nil
	runtime.GC()
	runtime.GC()
	require.Equal(t, int64(n), DroppedBuffers()-before)
}

// TestCloseWithOpenStreamReader: Close of a File whose StreamReader is
// open, mid-file with reads in flight, or dropped, returns; the stream's
// reads then fail with os.ErrClosed.
func TestCloseWithOpenStreamReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, randomBytes(8<<20, 2), 0o644))
	for _, how := range []string{"unread", "mid-file", "dropped", "at-eof", "reader-closed"} {
		t.Run(how, func(t *testing.T) {
			f, err := Open(path)
			require.NoError(t, err)
			r, err := f.NewStreamReader(0, StreamOptions{BufferSize: 64 << 10, ReadAhead: 4})
			require.NoError(t, err)
			switch how {
			case "mid-file":
				_, err := io.CopyN(io.Discard, r, 3<<20+17)
				require.NoError(t, err)
			case "dropped":
				r = nil
				runtime.GC()
			case "at-eof":
				_, err := io.Copy(io.Discard, r)
				require.NoError(t, err)
			case "reader-closed":
				require.NoError(t, r.Close())
			}
			closed := make(chan error, 1)
			go func() { closed <- f.Close() }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("File.Close did not return with a StreamReader open")
			}
			if r != nil {
				_, err := r.Read(make([]byte, 10))
				require.True(t, errors.Is(err, os.ErrClosed), "read after Close: %v", err)
				require.NoError(t, r.Close())
			}
		})
	}
	// A stream made of a closed File fails to read, and closes.
	f, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = f.NewStreamReader(0, StreamOptions{})
	require.ErrorIs(t, err, os.ErrClosed)
}

// TestPlainExtras: the methods os.File lacks, on files handed to the
// plain path, and on a nil File.
func TestPlainExtras(t *testing.T) {
	z, err := Open("/dev/zero")
	require.NoError(t, err)
	defer z.Close()
	require.False(t, z.Direct())
	require.Equal(t, 1, z.Alignment())
	b, err := z.ReadBuffer(1<<30, 100)
	require.NoError(t, err)
	require.Equal(t, make([]byte, 100), b.Bytes())
	b.Release()
	bufs, err := z.ReadMany([]Range{{0, 10}, {5, 3}}, ReadManyOptions{})
	require.NoError(t, err)
	require.Len(t, bufs[1].Bytes(), 3)
	_, err = z.NewStreamReader(0, StreamOptions{})
	require.ErrorContains(t, err, "not a regular file")

	d, err := Open(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, d.Datasync())
	_, err = d.ReadBuffer(0, 10)
	require.ErrorIs(t, err, syscall.EISDIR)
	osf, err := d.OSFile()
	require.NoError(t, err)
	require.NoError(t, osf.Close())
	require.NoError(t, d.Close())
	require.Equal(t, ^uintptr(0), d.Fd())

	var nf *File
	for _, err := range []error{
		nf.Datasync(), nf.Preallocate(0, 1), nf.PreallocateKeepSize(0, 1),
		func() error { _, err := nf.ReadBuffer(0, 1); return err }(),
		func() error { _, err := nf.ReadMany(nil, ReadManyOptions{}); return err }(),
		func() error { _, err := nf.NewStreamReader(0, StreamOptions{}); return err }(),
		func() error { _, err := nf.NewStreamWriter(0, StreamOptions{}); return err }(),
		func() error { _, err := nf.WriteAtDSync(nil, 0); return err }(),
		func() error { _, err := nf.OSFile(); return err }(),
	} {
		require.ErrorIs(t, err, os.ErrInvalid)
	}
	require.False(t, nf.Direct())
	require.Equal(t, 1, nf.Alignment())
}

// TestOSFileIsIndependent: the *os.File from OSFile does unaligned I/O,
// and neither its Close nor its finalizer touches the File's descriptor.
func TestOSFileIsIndependent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, WithDirect(Direct))
	require.NoError(t, err)
	defer f.Close()
	require.True(t, f.Direct())
	_, err = f.WriteString("hello, world")
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	for range 3 {
		osf, err := f.OSFile()
		require.NoError(t, err)
		require.NotEqual(t, f.Fd(), osf.Fd())
		got := make([]byte, 5)
		_, err = osf.ReadAt(got, 7) // unaligned: EINVAL on an O_DIRECT descriptor
		require.NoError(t, err)
		require.Equal(t, "world", string(got))
		osf = nil // dropped: its finalizer closes its own descriptor only
		runtime.GC()
		runtime.GC()
	}
	got := make([]byte, 5)
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
}

// TestCopyOntoItself: io.Copy of a File into itself, directly or through
// wrappers that use its cursor, returns as os.File's does.
func TestCopyOntoItself(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			require.NoError(t, os.WriteFile(path, randomBytes(10000, 3), 0o644))
			f, err := im.open(path, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			done := make(chan struct{})
			go func() {
				defer close(done)
				f.Seek(5000, io.SeekStart)
				io.Copy(f, f)
				f.Seek(0, io.SeekStart)
				io.Copy(struct{ io.Writer }{f}, f)
				f.Seek(0, io.SeekStart)
				io.Copy(f, struct{ io.Reader }{f})
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("io.Copy of a file into itself did not return")
			}
		})
	}
}

// fdNumbers returns the descriptor numbers f uses: the *os.File's, and
// the File's second, O_DIRECT one.
func fdNumbers(t *testing.T, f *File) []int {
	rc, err := f.osf.SyscallConn()
	require.NoError(t, err)
	var nums []int
	require.NoError(t, rc.Control(func(fd uintptr) { nums = append(nums, int(fd)) }))
	if f.dataFd >= 0 && f.dataFd != nums[0] {
		nums = append(nums, f.dataFd)
	}
	return nums
}

// victimState is what a call through a stale descriptor number could
// change of the file now holding it.
type victimState struct {
	cached           uint64 // pages in the page cache
	fdFlags, flFlags []int
	offsets          []int64
	size, uid, gid   int64
	mode             uint32
	mtime, ctime     unix.Timespec
	content          string // hash, read with O_DIRECT (no caching)
}

func stateOf(t *testing.T, path string, nums []int) victimState {
	var st victimState
	var cs unix.Cachestat_t
	require.NoError(t, unix.Cachestat(uint(nums[0]), &unix.CachestatRange{}, &cs, 0))
	st.cached = cs.Cache
	for _, n := range nums {
		fd, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0)
		require.NoError(t, err, "descriptor %d was closed", n)
		fl, err := unix.FcntlInt(uintptr(n), unix.F_GETFL, 0)
		require.NoError(t, err)
		off, err := unix.Seek(n, 0, io.SeekCurrent)
		require.NoError(t, err)
		st.fdFlags, st.flFlags, st.offsets = append(st.fdFlags, fd), append(st.flFlags, fl), append(st.offsets, off)
	}
	var s unix.Stat_t
	require.NoError(t, unix.Stat(path, &s))
	st.size, st.uid, st.gid, st.mode, st.mtime, st.ctime = s.Size, int64(s.Uid), int64(s.Gid), s.Mode, s.Mtim, s.Ctim
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	buf, err := unix.Mmap(-1, 0, int(s.Size+4095)&^4095, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	defer unix.Munmap(buf)
	n, err := unix.Pread(fd, buf, 0)
	require.NoError(t, err)
	st.content = hashOf(buf[:n])
	return st
}

// TestClosedFileTouchesNoDescriptor: after Close, no method of any kind
// of File (regular, FIFO, device, directory; page cache and Direct) uses
// its descriptor numbers. The test gives the numbers to another file
// (dup3), then calls every method of the closed File and of its streams,
// and finds that file as it was: open, same flags and offset, same size,
// mode, times and bytes, and its page cache neither filled (Prefetch,
// reads) nor emptied (Advise DontNeed).
func TestClosedFileTouchesNoDescriptor(t *testing.T) {
	dir := t.TempDir()
	victimPath := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victimPath, randomBytes(1<<20, 5), 0o600))
	kinds := []struct {
		name string
		open func(t *testing.T, im impl, dir string) osLike
	}{
		{"regular", func(t *testing.T, im impl, dir string) osLike {
			path := filepath.Join(dir, "f")
			require.NoError(t, os.WriteFile(path, randomBytes(64<<10, 6), 0o644))
			f, err := im.open(path, os.O_RDWR, 0)
			require.NoError(t, err)
			return f
		}},
		{"fifo", openFIFO},
		{"device", openNullDevice},
		{"dir", openDir},
	}
	for _, k := range kinds {
		for _, mode := range []DirectMode{PageCache, Direct} {
			t.Run(fmt.Sprintf("%s/%v", k.name, mode), func(t *testing.T) {
				f := openExtra(k.open)(t, mode, t.TempDir())
				var r *StreamReader
				var w *StreamWriter
				if k.name == "regular" {
					// Used enough that a direct File's descriptor
					// is in the ring's registered table.
					buf := make([]byte, 4096)
					for i := range registerAfter + 8 {
						_, err := f.ReadAt(buf, int64(i%16)*4096)
						require.NoError(t, err)
					}
					if f.direct != nil && f.sched().Fixed().Files {
						require.True(t, f.handle.Registered())
					}
					var err error
					r, err = f.NewStreamReader(0, StreamOptions{BufferSize: 4096, ReadAhead: 4})
					require.NoError(t, err)
					w, err = f.NewStreamWriter(0, StreamOptions{BufferSize: 4096, ReadAhead: 2})
					require.NoError(t, err)
					_, err = w.Write([]byte("behind"))
					require.NoError(t, err)
				}
				nums := fdNumbers(t, f)
				victim, err := os.OpenFile(victimPath, os.O_RDWR, 0)
				require.NoError(t, err)
				defer victim.Close()
				require.NoError(t, f.Close())
				for _, n := range nums {
					_, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0)
					require.ErrorIs(t, err, syscall.EBADF, "descriptor %d was not given back", n)
					require.NoError(t, unix.Dup3(int(victim.Fd()), n, unix.O_CLOEXEC))
					defer unix.Close(n)
				}
				for _, warm := range []bool{false, true} {
					if warm {
						_, err := io.Copy(io.Discard, io.NewSectionReader(victim, 0, 1<<20))
						require.NoError(t, err)
					} else {
						require.NoError(t, victim.Sync())
						require.NoError(t, unix.Fadvise(int(victim.Fd()), 0, 0, unix.FADV_DONTNEED))
					}
					before := stateOf(t, victimPath, nums)
					if warm {
						require.NotZero(t, before.cached)
					} else {
						require.Zero(t, before.cached)
					}
					tr := &transcript{}
					noPanic(t, "os.File's methods", func() { allMethods(tr, f) })
					require.Equal(t, ^uintptr(0), f.Fd())
					for _, m := range extraMethods {
						noPanic(t, m.name, func() { m.call(f) })
					}
					if r != nil {
						noPanic(t, "StreamReader", func() { streamReaderText(r) })
						noPanic(t, "StreamWriter", func() { streamWriterText(w) })
					}
					require.Equal(t, before, stateOf(t, victimPath, nums), "the closed File's calls changed the file now holding its descriptor numbers %v (warm %v)", nums, warm)
				}
			})
		}
	}
}

// TestSchedulerClosedUnderUse: a scheduler closed while Files (page cache
// and Direct), Buffers and streams made through it are open. Close
// returns (a stream's reads in flight complete; nobody need wait for
// them); the Buffers still hold the bytes read; then every call through
// the scheduler fails with os.ErrClosed, nothing faults, and once the
// Buffers are released and the streams and Files closed, no goroutine
// is left and the registered arena is unmapped.
func TestSchedulerClosedUnderUse(t *testing.T) {
	for _, b := range []sched.Backend{sched.URing, sched.AIO, sched.Blocking} {
		t.Run(string(b), func(t *testing.T) {
			noLeaks(t)
			s, err := sched.New(sched.Options{Backend: b})
			if err != nil {
				testenv.Unavailable(t, string(b), err)
			}
			path := filepath.Join(t.TempDir(), "f")
			data := randomBytes(4<<20, 3)
			require.NoError(t, os.WriteFile(path, data, 0o644))
			var files []*File
			for _, m := range []DirectMode{PageCache, Direct} {
				f, err := OpenFile(path, os.O_RDWR, 0, WithScheduler(s), WithDirect(m))
				require.NoError(t, err)
				files = append(files, f)
			}
			type held struct {
				b   *Buffer
				off int
			}
			var bufs []held
			var readers []*StreamReader
			var writers []*StreamWriter
			for i, f := range files {
				rb, err := f.ReadBuffer(4096+int64(i), 100)
				require.NoError(t, err)
				bufs = append(bufs, held{rb, 4096 + i})
				many, err := f.ReadMany([]Range{{0, 10}, {1 << 20, 5000}, {3 << 20, 4096}}, ReadManyOptions{})
				require.NoError(t, err)
				bufs = append(bufs, held{many[0], 0}, held{many[1], 1 << 20}, held{many[2], 3 << 20})
				r, err := f.NewStreamReader(0, StreamOptions{BufferSize: 64 << 10, ReadAhead: 8})
				require.NoError(t, err)
				_, err = io.CopyN(io.Discard, r, 100<<10)
				require.NoError(t, err)
				nb, err := r.NextBuffer()
				require.NoError(t, err)
				bufs = append(bufs, held{nb, 100 << 10})
				readers = append(readers, r)
				w, err := f.NewStreamWriter(int64(len(data)), StreamOptions{BufferSize: 64 << 10, ReadAhead: 2})
				require.NoError(t, err)
				_, err = w.Write(data[:100<<10]) // one buffer written behind, one partly filled
				require.NoError(t, err)
				writers = append(writers, w)
			}
			arena := s.Stats().Buffers.Arena
			if b == sched.URing && s.Fixed().Buffers {
				require.NotZero(t, arena)
			}

			within(t, 10*time.Second, func() { require.NoError(t, s.Close()) })

			for _, h := range bufs { // mapped, and as read
				require.Equal(t, data[h.off:h.off+len(h.b.Bytes())], h.b.Bytes())
			}
			closed := func(what string, err error) {
				t.Helper()
				require.ErrorIs(t, err, os.ErrClosed, what)
				var pe *fs.PathError
				require.ErrorAs(t, err, &pe, what)
				require.Equal(t, path, pe.Path, what)
			}
			p := make([]byte, 8192)
			for _, f := range files {
				mode := fmt.Sprintf("direct=%v: ", f.Direct())
				_, err := f.ReadAt(p[:4096], 8192) // page-cache hit, or aligned direct read
				closed(mode+"ReadAt", err)
				_, err = f.ReadAt(p[:100], 3) // bounced when direct
				closed(mode+"ReadAt unaligned", err)
				_, err = f.Read(p)
				closed(mode+"Read", err)
				_, err = f.WriteAt(p[:100], 10) // inline page-cache write, or bounced direct
				closed(mode+"WriteAt", err)
				_, err = f.WriteAt(p[:4096], 4096)
				closed(mode+"WriteAt aligned", err)
				_, err = f.Write(p[:10])
				closed(mode+"Write", err)
				_, err = f.WriteAtDSync(p[:10], 0)
				closed(mode+"WriteAtDSync", err)
				closed(mode+"Sync", f.Sync())
				closed(mode+"Datasync", f.Datasync())
				closed(mode+"Preallocate", f.Preallocate(0, 8192))
				_, err = f.ReadBuffer(0, 10)
				closed(mode+"ReadBuffer", err)
				_, err = f.ReadMany([]Range{{0, 10}, {1 << 20, 10}}, ReadManyOptions{})
				closed(mode+"ReadMany", err)
				_, err = f.ReadFrom(strings.NewReader("from a reader"))
				closed(mode+"ReadFrom", err)
				_, err = f.WriteTo(io.Discard)
				closed(mode+"WriteTo", err)
				_, err = f.NewStreamWriter(0, StreamOptions{BufferSize: 4096})
				closed(mode+"NewStreamWriter", err)
				r, err := f.NewStreamReader(0, StreamOptions{BufferSize: 4096})
				require.NoError(t, err) // made; its reads fail
				_, err = r.Read(p)
				closed(mode+"new StreamReader's Read", err)
				require.NoError(t, r.Close())
			}
			for _, r := range readers {
				// Reads completed before Close are still delivered;
				// then the stream fails.
				_, err := io.Copy(io.Discard, r)
				closed("StreamReader", err)
				_, err = r.NextBuffer()
				closed("StreamReader.NextBuffer", err)
				require.NoError(t, r.Close())
			}
			for _, w := range writers {
				var err error
				for err == nil { // fails once the buffer written behind is waited for
					_, err = w.Write(p)
				}
				closed("StreamWriter.Write", err)
				closed("StreamWriter.Close", w.Close())
			}
			if arena != 0 {
				require.Equal(t, arena, s.Stats().Buffers.Arena, "unmapped with Buffers held")
			}
			for _, h := range bufs {
				h.b.Release()
			}
			for _, f := range files {
				require.NoError(t, f.Close())
			}
			st := s.Stats().Buffers
			require.Zero(t, st.Cached, "the closed scheduler keeps memory")
			require.Zero(t, st.Arena, "the arena's memory was not given back")
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, data, got[:len(data)], "the file changed")
		})
	}
}

// TestCloseReturnsCloseError: Close returns what close(2) says of each of
// the File's descriptors, as os.File's Close does: here the direct
// descriptor was closed behind the File's back, so close(2) fails with
// EBADF, and the regular descriptor is closed all the same.
func TestCloseReturnsCloseError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f := openForTest(t, path, os.O_RDWR|os.O_CREATE, DirectRequired)
	require.NotEqual(t, f.bufferedFd, f.dataFd, "a direct File has a second descriptor")
	bfd := f.bufferedFd
	require.NoError(t, unix.Close(f.dataFd))
	err := f.Close()
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "close", pe.Op)
	require.Equal(t, path, pe.Path)
	require.ErrorIs(t, err, syscall.EBADF)
	var st unix.Stat_t
	require.ErrorIs(t, unix.Fstat(bfd, &st), syscall.EBADF, "the regular descriptor is closed too")
}
