//go:build linux

package diskio

import (
	"io"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/sched"
)

// The page-cache path of buffered files (PageCache, or DirectAuto where
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
// after the first refusal and Nowait says why.

// pageCache is a buffered File's RWF_NOWAIT state.
type pageCache struct {
	noRead  atomic.Bool   // reads go straight to the scheduler
	cold    atomic.Bool   // the last read attempt found nothing (EAGAIN): a miss is likely
	skipped atomic.Uint32 // reads sent straight to the scheduler while cold
	noWrite atomic.Bool

	mu                      sync.Mutex
	readReason, writeReason string
}

// Nowait reports whether reads and writes first try the page cache on the
// caller's goroutine. A buffered file starts with both on and turns one
// off, for good, the first time the kernel refuses RWF_NOWAIT for it
// (ext4 refuses it for writes); an O_SYNC or O_DSYNC file never tries
// writes inline (they would wait for the disk). An O_DIRECT file never uses the page cache.
func (f *File) Nowait() NowaitStatus {
	if f.direct {
		const why = "O_DIRECT file: no page cache"
		return NowaitStatus{ReadsReason: why, WritesReason: why}
	}
	f.pc.mu.Lock()
	defer f.pc.mu.Unlock()
	return NowaitStatus{Reads: !f.pc.noRead.Load(), ReadsReason: f.pc.readReason,
		Writes: !f.pc.noWrite.Load(), WritesReason: f.pc.writeReason}
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
	if !f.pc.cold.Load() && !f.pc.noRead.Load() {
		// The common case first, with nothing more than it needs: a
		// warm file, and the whole range in the page cache.
		n, err := f.s.ReadAtNowait(f.fd, b, off, true)
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
		f.pc.cold.Store(true) // a miss is likely next time too: see readCachedFrom
	case sched.NowaitRefused(err):
		f.pc.refuse(&f.pc.noRead, &f.pc.readReason, "preadv2(RWF_NOWAIT): "+err.Error())
	default:
		return 0, err
	}
	return f.s.ReadAt(f.fd, b, off)
}

// readCachedFrom reads b[done:] at off+done, the page cache first.
func (f *File) readCachedFrom(b []byte, off int64, done int) (int, error) {
	// While reads miss, most skip the attempt: it would only add a system
	// call, and the read-ahead it submits from the caller's thread can
	// sleep there (more OS threads). One in coldProbe still tries, to see
	// the file warm up.
	skip := f.pc.cold.Load() && f.pc.skipped.Add(1)%coldProbe != 0
	for !skip && !f.pc.noRead.Load() && done < len(b) {
		n, err := f.s.ReadAtNowait(f.fd, b[done:], off+int64(done), !f.pc.cold.Load())
		if miss := err == unix.EAGAIN; miss != f.pc.cold.Load() {
			f.pc.cold.Store(miss) // only on a change: 128 readers share the line
		}
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
			f.pc.refuse(&f.pc.noRead, &f.pc.readReason, "preadv2(RWF_NOWAIT): "+err.Error())
			break
		}
		return done, err
	}
	if done == len(b) {
		return done, nil
	}
	n, err := f.s.ReadAt(f.fd, b[done:], off+int64(done))
	return done + n, err
}

// coldProbe: while a file's reads miss, one read in coldProbe tries the
// page cache first.
const coldProbe = 8

// writeCached writes b at off to a buffered file: what the page cache
// takes at once on the caller's goroutine, the rest through the
// scheduler. rwf are WriteAtFlags' flags.
func (f *File) writeCached(b []byte, off int64, rwf uint32) (int, error) {
	done := 0
	for rwf&(unix.RWF_DSYNC|unix.RWF_SYNC) == 0 && !f.pc.noWrite.Load() && done < len(b) {
		n, err := f.s.WriteAtNowait(f.fd, b[done:], off+int64(done), rwf)
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
			f.pc.refuse(&f.pc.noWrite, &f.pc.writeReason, "pwritev2(RWF_NOWAIT): "+err.Error())
			break
		}
		return done, err
	}
	if done == len(b) {
		return done, nil
	}
	if rest := len(b) - done; rwf == 0 && inlineWrites && !f.syncFd && rest <= maxInlineWrite &&
		f.readFree(off+int64(done), rest) {
		// The page cache refuses to say it would not wait (ext4 takes no
		// RWF_NOWAIT buffered writes), but nothing is there to read: the
		// write is a copy, made on the caller as os.File makes it,
		// instead of a trip through an io_uring worker.
		n, err := pwriteAll(f.fd, b[done:], off+int64(done), 0)
		done += n
		if err != io.ErrShortWrite {
			return done, err
		}
	}
	n, err := f.s.WriteAtFlags(f.fd, b[done:], off+int64(done), rwf)
	return done + n, err
}

// maxInlineWrite is the most writeCached copies on the caller's thread
// when RWF_NOWAIT is refused: a WAL's records and flushes. Larger writes
// (gathered table data) go through the scheduler, whose worker then also
// takes any write throttling (balance_dirty_pages) the copy meets.
const maxInlineWrite = 64 << 10

// readFree reports whether a buffered write of [off, off+n) finds each
// page it covers only in part either cached or past the file's size: the
// pages the kernel would otherwise read before copying. (A buffered
// File's fd is bfd, the descriptor cached looks at.)
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
	size := int64(-1)
	for _, p := range edges[:k] {
		if f.cached(p, 1) {
			continue
		}
		if size < 0 {
			var err error
			if size, err = sizeOf(f.fd); err != nil {
				return false
			}
		}
		if p < size {
			return false
		}
	}
	return true
}
