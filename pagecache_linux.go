//go:build linux

package diskio

import (
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/sched"
)

// The page-cache path of buffered files (PageCache, or Direct where
// O_DIRECT is refused). A read first copies what the page cache holds on
// the caller's goroutine with preadv2(RWF_NOWAIT), which never waits for
// the disk, so a hit costs about what os.File's pread costs and no thread
// is ever parked on it; EAGAIN, or a short result that a second attempt
// cannot extend, sends the rest to the scheduler, where io_uring reads it
// asynchronously (Linux 5.9+ on ext4, xfs, btrfs: no worker thread). The
// failed attempt has already started the kernel's read-ahead, so
// sequential reads keep it. Writes go the same way where the filesystem
// takes RWF_NOWAIT writes (xfs and btrfs since Linux 6.0-6.1; ext4
// refuses them), through the scheduler otherwise. Where RWF_NOWAIT is
// refused (EOPNOTSUPP, ENOSYS, a seccomp EPERM) the file stops trying
// after the first refusal; the scheduler refuses the later Files' write
// attempts itself, without a system call (sched.File.WriteAtNowait). One on a filesystem that takes
// them (xfs, btrfs) then writes as one on ext4 does: on its caller when
// readFree says no page is read, through the scheduler otherwise.

// pageCache is a buffered File's RWF_NOWAIT state.
type pageCache struct {
	noRead  atomic.Bool   // reads go straight to the scheduler
	skipped atomic.Uint32 // reads sent straight to the scheduler while the last attempt missed (sched.File.Missed)
	noWrite atomic.Bool

	// sizeHint is the file's size as the File last learnt it: fstat at
	// open (0 after O_TRUNC), statx in readFree, its truncations, and
	// the ends of its own writes (the pages they wrote may have left the
	// cache since). Another descriptor may have changed the size: the
	// hint only chooses where a write runs (readFree), never what it does.
	sizeHint atomic.Int64

	// writers lets maxInlineWriters writes at a time run on their
	// callers' threads: the kernel serialises buffered writes of an
	// inode (i_rwsem) anyway, so the writers that would wait there wait
	// here instead, parked goroutines rather than blocked threads; the
	// second keeps the next write ready in the kernel.
	writers gate
	// lastPage is the page where the last inline write ended: cached.
	// Stored only when it changes, so a stream of small writes into one
	// page stores nothing.
	lastPage atomic.Int64
	// cachedLo and cachedHi are the window cachestat last found all
	// cached (readFree).
	cachedLo, cachedHi atomic.Int64

	mu                      sync.Mutex
	readReason, writeReason string
}

// setupCache readies a page-cache File's state, for a file opened with
// status flags fl whose fstat is st (nil if OpenFile did not ask): the
// size hint (st's size, 0 after O_TRUNC, else unknown until readFree
// learns it), and the writes never tried with RWF_NOWAIT: all of an
// O_SYNC or O_DSYNC file's, and all where the scheduler has seen the
// kernel refuse it.
func (f *File) setupCache(fl int, st *unix.Stat_t) {
	f.cache.lastPage.Store(-1) // no inline write yet
	switch {
	case st != nil:
		f.cache.sizeHint.Store(st.Size)
	case f.access != os.O_RDONLY && fl&os.O_TRUNC != 0:
		f.cache.sizeHint.Store(0)
	default:
		f.cache.sizeHint.Store(sizeUnknown) // readFree learns it
	}
	if f.syncFd {
		// RWF_NOWAIT could only fail: every write waits for the disk.
		f.cache.refuse(&f.cache.noWrite, &f.cache.writeReason, "opened with O_SYNC or O_DSYNC")
	}
	if err := f.bf.NowaitWritesRefused(); err != nil {
		f.cache.refuse(&f.cache.noWrite, &f.cache.writeReason, "pwritev2(RWF_NOWAIT) refused on an earlier file of this scheduler: "+err.Error())
	}
}

// grow raises the size hint to end.
func (c *pageCache) grow(end int64) {
	for {
		old := c.sizeHint.Load()
		if end <= old || c.sizeHint.CompareAndSwap(old, end) {
			return
		}
	}
}

// maxInlineWriters is how many WriteAt calls of one File run on their
// callers' threads at once (pageCache.writers), beside the one cursor
// Write that the cursor's lock allows.
const maxInlineWriters = 2

// gate admits a bounded number of goroutines at once; the others wait
// parked. Its zero value is open, with no one inside.
type gate struct {
	in      atomic.Int32 // goroutines inside
	waiting atomic.Int32 // goroutines parked in admit
	mu      sync.Mutex
	cond    sync.Cond // on mu
}

// admit returns once fewer than limit goroutines are inside, with the
// caller counted in; leave counts it out.
func (g *gate) admit(limit int32) {
	for {
		if v := g.in.Load(); v < limit && g.in.CompareAndSwap(v, v+1) {
			return
		}
		g.mu.Lock()
		if g.cond.L == nil {
			g.cond.L = &g.mu
		}
		g.waiting.Add(1)
		for g.in.Load() >= limit {
			g.cond.Wait()
		}
		g.waiting.Add(-1)
		g.mu.Unlock()
	}
}

// leave lets the next goroutine in.
func (g *gate) leave() {
	g.in.Add(-1)
	if g.waiting.Load() > 0 {
		g.mu.Lock()
		if g.cond.L != nil {
			g.cond.Signal()
		}
		g.mu.Unlock()
	}
}

// sizeUnknown is the size hint of a File that has not learnt its size.
const sizeUnknown = 1<<63 - 1

// nowait reports whether reads and writes first try the page cache on the
// caller's goroutine. A buffered file starts with both on and turns one
// off, for good, the first time the kernel refuses RWF_NOWAIT for it
// (ext4 refuses it for writes); an O_SYNC or O_DSYNC file never tries
// writes inline (they would wait for the disk). An O_DIRECT file never uses the page cache.
func (f *File) nowait() nowaitStatus {
	if st, ok := f.nowaitPlain(); ok {
		return st
	}
	if f.direct != nil {
		const why = "O_DIRECT file: no page cache"
		return nowaitStatus{ReadsReason: why, WritesReason: why}
	}
	f.cache.mu.Lock()
	defer f.cache.mu.Unlock()
	return nowaitStatus{Reads: !f.cache.noRead.Load(), ReadsReason: f.cache.readReason,
		Writes: !f.cache.noWrite.Load(), WritesReason: f.cache.writeReason}
}

func (c *pageCache) refuse(off *atomic.Bool, reason *string, why string) {
	c.mu.Lock()
	if !off.Load() {
		*reason = why
		off.Store(true)
	}
	c.mu.Unlock()
}

// readCached reads b at off from a buffered file; like readAt it returns
// fewer bytes (and no error) at end of file.
func (f *File) readCached(b []byte, off int64) (int, error) {
	if !f.handle.Missed() && !f.cache.noRead.Load() {
		// The common case first, with nothing more than it needs: a
		// warm file, and the whole range in the page cache.
		n, err := f.handle.ReadAtNowait(b, off)
		if err == nil && n == len(b) {
			return n, nil
		}
		return f.readCachedRest(b, off, n, err)
	}
	return f.readCachedFrom(b, off, 0)
}

// readCachedRest goes on after readCached's first attempt, which returned
// n, err.
func (f *File) readCachedRest(b []byte, off int64, n int, err error) (int, error) {
	switch {
	case err == nil && n == 0:
		return 0, nil // end of file
	case err == nil:
		return f.readCachedFrom(b, off, n) // short: see readCachedFrom
	case err == unix.EAGAIN:
		// A miss is likely next time too (f.handle.Missed): see
		// readCachedFrom.
	case sched.NowaitRefused(err):
		f.cache.refuse(&f.cache.noRead, &f.cache.readReason, "preadv2(RWF_NOWAIT): "+err.Error())
	default:
		return 0, err
	}
	return f.handle.ReadAt(b, off)
}

// readCachedFrom reads b[done:] at off+done, the page cache first.
func (f *File) readCachedFrom(b []byte, off int64, done int) (int, error) {
	// While reads miss, most skip the attempt: it would only add a system
	// call, and the read-ahead it submits from the caller's thread can
	// sleep there (more OS threads). One in coldProbe still tries, to see
	// the file warm up.
	skip := f.handle.Missed() && f.cache.skipped.Add(1)%coldProbe != 0
	for !skip && !f.cache.noRead.Load() && done < len(b) {
		n, err := f.handle.ReadAtNowait(b[done:], off+int64(done))
		if err == nil {
			if n == 0 {
				return done, nil // end of file
			}
			// Short: the rest is not cached, the file ends, or the
			// kernel stopped early (preadv2(2) BUGS). Ask again:
			// 0 is the end, EAGAIN sends the rest on.
			done += n
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if sched.NowaitRefused(err) {
			f.cache.refuse(&f.cache.noRead, &f.cache.readReason, "preadv2(RWF_NOWAIT): "+err.Error())
			break
		}
		return done, err
	}
	if done == len(b) {
		return done, nil
	}
	n, err := f.handle.ReadAt(b[done:], off+int64(done))
	return done + n, err
}

// coldProbe: while a file's reads miss, one read in coldProbe tries the
// page cache first.
const coldProbe = 8

// writeCached writes b at off to a buffered file: what the page cache
// takes at once on the caller's goroutine, the rest through the
// scheduler. rwf are WriteAtFlags' flags.
//
// Where the filesystem takes RWF_NOWAIT writes (xfs, btrfs), one
// pwritev2 says whether the write could be made without waiting. Where
// it refuses them (ext4), a write that needs no page read from the disk
// is a copy into the page cache, made on the caller as os.File makes it,
// with one system call as os.File's: that is a write whose partial pages
// at either end are ones the last such write left (cached) or lie past
// the file's size (zero-filled), as the File's own hints say without
// asking the kernel (readFreeHint); failing that, cachestat and statx ask
// (readFree). Any other write, or one larger than maxInlineWrite, goes to
// the scheduler, whose io_uring worker takes the wait.
//
// cursor says the caller holds the cursor's lock: cursor writes are one at a time
// already, and do not take a place among the inline writers.
func (f *File) writeCached(b []byte, off int64, rwf uint32, cursor bool) (int, error) {
	if f.cache.noWrite.Load() {
		if n, ok, err := f.writeInline(b, off, rwf, cursor); ok {
			return n, err
		}
	}
	done := 0
	for rwf&(unix.RWF_DSYNC|unix.RWF_SYNC) == 0 && !f.cache.noWrite.Load() && done < len(b) {
		n, err := f.handle.WriteAtNowait(b[done:], off+int64(done), rwf)
		if err == nil {
			if n == 0 {
				break // no progress: let the scheduler's write say why
			}
			done += n
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if sched.NowaitRefused(err) {
			f.cache.refuse(&f.cache.noWrite, &f.cache.writeReason, "pwritev2(RWF_NOWAIT): "+err.Error())
			break
		}
		return done, err
	}
	if done == len(b) {
		f.cache.grow(off + int64(done))
		return done, nil
	}
	if done == 0 && f.cache.noWrite.Load() {
		// Refused just now (the first write on ext4).
		if n, ok, err := f.writeInline(b, off, rwf, cursor); ok {
			return n, err
		}
	}
	n, err := f.handle.WriteAtFlags(b[done:], off+int64(done), rwf)
	f.cache.grow(off + int64(done+n))
	return done + n, err
}

// writeInline makes writeCached's write on the caller's thread if it
// reads nothing from the disk (ok), else leaves it to the caller (!ok).
func (f *File) writeInline(b []byte, off int64, rwf uint32, cursor bool) (n int, ok bool, err error) {
	if rwf != 0 || f.syncFd || len(b) > maxInlineWrite {
		return 0, false, nil
	}
	if !f.readFree(off, len(b)) {
		return 0, false, nil
	}
	if !cursor {
		f.cache.writers.admit(maxInlineWriters)
	}
	n, err = f.handle.WriteAtInline(b, off, 0)
	if !cursor {
		f.cache.writers.leave()
	}
	if n > 0 {
		if p := f.pageDown(off + int64(n) - 1); f.cache.lastPage.Load() != p {
			f.cache.lastPage.Store(p)
		}
		f.cache.grow(off + int64(n))
	}
	if err != io.ErrShortWrite {
		return n, true, err
	}
	// Stopped short: the scheduler's write says why.
	m, err := f.handle.WriteAtFlags(b[n:], off+int64(n), rwf)
	f.cache.grow(off + int64(n+m))
	return n + m, true, err
}

// maxInlineWrite is the most writeCached copies on the caller's thread
// when RWF_NOWAIT is refused: a WAL's records and flushes. Larger writes
// (gathered table data) go through the scheduler, whose worker then also
// takes any write throttling (balance_dirty_pages) the copy meets.
const maxInlineWrite = 64 << 10

// readFree reports whether a buffered write of [off, off+n) finds each
// page it covers only in part either cached or past the file's size: the
// pages the kernel would otherwise read before copying. The File's own
// hints answer first, without a system call: a page past the size it
// knows, the page its last inline write ended in, or one in the last
// window cachestat found cached. Another descriptor may have changed the
// file since: a wrong hint only makes a write wait on its caller's thread
// for a page read, as os.File's would. The rest are asked: cachestat of a
// window from the page (remembered when all of it is cached), then of the
// page alone, then the size (statx). A File that does not know its size
// (opened without O_TRUNC) asks it first, once.
func (f *File) readFree(off int64, n int) bool {
	end := off + int64(n)
	var edges [2]int64
	k := 0
	if off%f.page != 0 {
		edges[k] = f.pageDown(off)
		k++
	}
	if end%f.page != 0 && (k == 0 || f.pageDown(end) != edges[0]) {
		edges[k] = f.pageDown(end)
		k++
	}
	if k > 0 && f.cache.sizeHint.Load() == sizeUnknown {
		// First learn the size, with one statx: a new or empty file
		// (a journal created for one transaction) then needs nothing
		// more, where asking the cache first took two cachestat calls
		// before the statx.
		if _, ok := f.learnSize(); !ok {
			return false
		}
	}
	for _, p := range edges[:k] {
		if f.cache.knownFree(p) {
			continue
		}
		if f.cached(p, cacheWindow) {
			f.cache.cachedLo.Store(p)
			f.cache.cachedHi.Store(p + cacheWindow)
			continue
		}
		if f.cached(p, 1) {
			continue
		}
		if size, ok := f.learnSize(); !ok || p < size {
			return false
		}
	}
	return true
}

// learnSize asks the kernel for the file's size (statx) and keeps it as
// the size hint.
func (f *File) learnSize() (int64, bool) {
	size, err := sizeOf(f.dataFd)
	if err != nil {
		return 0, false
	}
	f.cache.sizeHint.Store(size)
	return size, true
}

// cacheWindow is how far past an edge page readFree asks cachestat, so
// that the writes that follow in order find their pages known cached.
const cacheWindow = 64 << 10

// knownFree reports whether the hints say a write into page p reads
// nothing: p lies past the size the File knows, is the page its last
// inline write ended in, or is in the window cachestat last found cached.
func (c *pageCache) knownFree(p int64) bool {
	return p >= c.sizeHint.Load() || p == c.lastPage.Load() ||
		p >= c.cachedLo.Load() && p < c.cachedHi.Load()
}
