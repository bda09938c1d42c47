//go:build linux

package diskio

import (
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// The write path: Write, WriteAt, O_APPEND; whole blocks direct, the
// pages of partial blocks through the page cache (writeDirect).

// Write writes b at the cursor (at the end with O_APPEND) and advances it.
func (f *File) Write(b []byte) (int, error) {
	if p, ok := f.plainPath(); ok {
		return p.Write(b)
	}
	if err := f.acquire("write"); err != nil {
		return 0, err
	}
	defer f.release()
	// A write refused for the access mode, or of nothing, does not move
	// the cursor, not even to the end with O_APPEND.
	if f.access == os.O_RDONLY {
		return 0, f.pathErr("write", syscall.EBADF)
	}
	if err := f.flush.failed(); err != nil {
		return 0, err // the first failed flush, for ever (sync_linux.go)
	}
	if len(b) == 0 {
		return 0, nil
	}
	f.cur.mu.Lock()
	defer f.cur.mu.Unlock()
	var n int
	var off int64
	var err error
	if f.append {
		n, err = f.appendWrite(b)
		off = f.cur.pos.Load() - int64(n) // where the kernel put it
	} else {
		off = f.cur.pos.Load()
		n, err = f.writeDurably(b, off, true)
		f.cur.pos.Store(off + int64(n))
	}
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	return n, f.pathErrAt("write", off, len(b), err)
}

// appendWrite is an O_APPEND Write: the kernel's own append (RWF_APPEND,
// buffered), which lands whole at the end of the file as it is at that
// moment, across descriptors and processes, as os.File's does. An O_DIRECT
// append cannot: its offset would be chosen before the write (a race with
// other appenders), and the kernel refuses O_DIRECT at an unaligned end.
// The cursor ends at the file's end as the kernel has it just after: the
// end of this write, unless another descriptor appended in between.
func (f *File) appendWrite(b []byte) (int, error) {
	rwf := f.dur.take()
	if rwf == 0 && !f.syncFd {
		n, pos, err := f.appendInline(b)
		f.dur.done(rwf)
		if pos >= 0 {
			f.cur.pos.Store(pos)
		}
		return n, err
	}
	f.direct.beginBuffered()
	n, err := f.bf.WriteAtFlags(b, 0, unix.RWF_APPEND|rwf)
	f.direct.endBuffered()
	f.dur.done(rwf)
	st, serr := statOf(f.bufferedFd)
	if st.ok {
		f.cur.pos.Store(st.size)
	}
	if rwf != 0 {
		f.dur.setStamp(st)
	}
	if err == nil {
		err = serr
	}
	return n, err
}

// appendInline is an O_APPEND Write that need not wait for the disk,
// made on the caller's thread as os.File makes it: an append is a copy
// into the page cache at the file's end, where the last page is the one
// the previous append left (or past the size, zero-filled without a
// read). pwritev2 at offset -1 with RWF_APPEND appends and leaves the
// descriptor's offset at the end of this write, which lseek then reads:
// the cursor is exact even when other descriptors append meanwhile. pos
// is -1 if it could not be read.
func (f *File) appendInline(b []byte) (n int, pos int64, err error) {
	f.direct.beginBuffered()
	defer f.direct.endBuffered()
	n, err = f.bf.WriteAtInline(b, -1, unix.RWF_APPEND)
	return n, f.endOf(), err
}

// endOf returns the buffered descriptor's offset (after an append: the
// end of it), or -1.
func (f *File) endOf() int64 {
	pos, err := sys.Seek(f.bufferedFd, 0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	return pos
}

// writeDurably is writeAt for Write and WriteAt: durable in one trip
// when the File expects a flush right after it (durability_linux.go).
// cursor says the caller holds the cursor's lock (Write): cursor writes are one at a
// time already.
func (f *File) writeDurably(b []byte, off int64, cursor bool) (int, error) {
	if err := f.writable(b, off); err != nil {
		return 0, err
	}
	d := f.direct
	if d == nil {
		// Never durable in one trip: a buffered RWF_DSYNC write would
		// pay the writeback alone. A change for the next flush.
		n, err := f.writeCached(b, off, 0, cursor)
		f.dur.record(0)
		return n, err
	}
	rwf := f.dur.take()
	n, err := f.writeDirect(d, b, off, rwf)
	f.dur.done(rwf)
	if rwf != 0 {
		f.stampDurable()
	}
	return n, err
}

// WriteString is like Write, but writes the contents of s.
func (f *File) WriteString(s string) (int, error) {
	return f.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// WriteAt writes b at off. Like os.File it refuses files opened with
// O_APPEND.
func (f *File) WriteAt(b []byte, off int64) (int, error) {
	if p, ok := f.plainPath(); ok {
		return p.WriteAt(b, off)
	}
	// The order of checks is os.File's.
	if f.append {
		return 0, errWriteAtInAppendMode
	}
	if off < 0 {
		return 0, negativeOffset("writeat", f.name)
	}
	if len(b) == 0 {
		return 0, nil
	}
	if err := f.acquire("write"); err != nil {
		return 0, err
	}
	defer f.release()
	if err := f.flush.failed(); err != nil {
		return 0, err // the first failed flush, for ever (sync_linux.go)
	}
	n, err := f.writeDurably(b, off, false)
	return n, f.pathErrAt("write", off, len(b), err)
}

// writeAt writes b at off; rwf are RWF_* flags for every write it issues
// (RWF_DSYNC: WriteAtDSync).
func (f *File) writeAt(b []byte, off int64, rwf uint32) (int, error) {
	if err := f.writable(b, off); err != nil || len(b) == 0 {
		return 0, err
	}
	if d := f.direct; d != nil {
		return f.writeDirect(d, b, off, rwf)
	}
	return f.writeCached(b, off, rwf, false) // page cache first (pagecache_linux.go)
}

// writable is the kernel's checks of a write of b at off, before any is
// made: the access mode, and a range that overflows.
func (f *File) writable(b []byte, off int64) error {
	if f.access == os.O_RDONLY {
		return syscall.EBADF
	}
	if off+int64(len(b)) < 0 {
		return syscall.EINVAL
	}
	return nil
}

// writeDirect is writeAt for an O_DIRECT File. It never writes a byte it
// was not given, so no reader, of this File or of another descriptor,
// ever sees a size or bytes beyond what was written, nothing is padded and
// trimmed, and nothing is read back:
//
//   - a write of whole blocks goes to the disk directly (bounced through
//     aligned memory if b is not aligned);
//   - a write with a partial block at either end writes the pages holding
//     its ends through the buffered descriptor, with their exact bytes,
//     and only the whole pages between them directly. The page cache
//     supplies the rest of an edge page: the next append finds the page
//     its last one left there (no read), the kernel zero-fills a page past
//     the size or over unwritten extents, and reads it only where the
//     file has old data there (a recycled log, once per page, as os.File).
//
// The kernel keeps the two descriptors coherent: a direct read or write of
// a range first writes back and drops the page cache's pages there. What
// the File must prevent itself is a buffered write of its own in flight
// next to a direct one (directIO.writeMix, see directWrite).
//
// rwf (RWF_DSYNC, RWF_SYNC) makes the write durable when it returns: on
// the one write if the range is one piece, else by a flush after them.
func (f *File) writeDirect(d *directIO, b []byte, off int64, rwf uint32) (int, error) {
	wend := off + int64(len(b))
	if off%d.block == 0 && wend%d.block == 0 {
		return f.writeBlocks(d, b, off, rwf)
	}
	// [off, ms) and [me, wend) are the edges through the page cache,
	// [ms, me) the whole pages between them.
	ms, me := off, wend
	if off%f.page != 0 {
		ms = min(f.pageDown(off)+f.page, wend)
	}
	if wend%f.page != 0 {
		me = max(f.pageDown(wend), ms)
	}
	if ms == me {
		// No whole page between the edges: one buffered write; the next
		// small writes will likely want the pages after it.
		return f.writeBuffered(d, b, off, rwf, true)
	}
	pieces := 0
	for _, n := range [3]int64{ms - off, me - ms, wend - me} {
		if n > 0 {
			pieces++
		}
	}
	prwf := rwf
	if pieces > 1 {
		prwf = 0 // one flush after all pieces, below
	}
	// In file order, so that the size only grows over written bytes.
	done := 0
	if ms > off {
		n, err := f.writeBuffered(d, b[:ms-off], off, prwf, false)
		done += n
		if err != nil {
			return done, err
		}
	}
	n, err := f.writeBlocks(d, b[ms-off:me-off], ms, prwf)
	done += n
	if err != nil {
		return done, err
	}
	if wend > me {
		n, err := f.writeBuffered(d, b[me-off:], me, prwf, false)
		done += n
		if err != nil {
			return done, err
		}
	}
	if rwf != prwf {
		return done, f.flush.sync(rwf&unix.RWF_SYNC != 0, f.doFlush)
	}
	return done, nil
}

// writeBlocks writes b at off with O_DIRECT: whole blocks, at most
// maxBounce bytes per request, through aligned bounce buffers if b's
// memory is not aligned.
func (f *File) writeBlocks(d *directIO, b []byte, off int64, rwf uint32) (int, error) {
	done := 0
	for done < len(b) {
		p := b[done:min(len(b), done+maxBounce)]
		var n int
		var err error
		if d.aligned(p, off+int64(done)) {
			n, err = f.directWrite(d, p, off+int64(done), rwf)
		} else {
			var buf []byte
			if buf, err = f.getBounce(len(p)); err != nil {
				return done, err
			}
			copy(buf, p)
			n, err = f.directWrite(d, buf, off+int64(done), rwf)
			f.putBounce(buf)
		}
		done += max(n, 0)
		if err == nil && n < len(p) {
			err = io.ErrShortWrite
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// writeBuffered writes b at off through the buffered descriptor: exact
// bytes, the page cache supplying the rest of the pages. A write that
// need not wait for the disk (no RWF_DSYNC, a descriptor without O_SYNC
// or O_DSYNC) into pages the page cache
// holds is a memory copy: it is made on the caller's thread, as os.File
// makes it, instead of a trip through an io_uring worker (ext4 takes no
// RWF_NOWAIT buffered writes, so io_uring hands every one to a worker).
// A page not cached would have the kernel read it (old data below the
// size) or zero it: that write goes through the scheduler.
//
// ahead (a write without a whole page) following another such write that
// ended where it starts lets a miss read the old data ahead for the writes
// that follow (readAheadEdge); the edges of larger writes would find most
// of such a window overwritten by their whole pages, and read one page
// each, as os.File's writes do.
func (f *File) writeBuffered(d *directIO, b []byte, off int64, rwf uint32, ahead bool) (int, error) {
	d.writeMix.Lock()
	defer d.writeMix.Unlock()
	inline := rwf == 0 && !f.syncFd
	small := ahead && off == d.partialEnd
	if ahead {
		d.partialEnd = off + int64(len(b))
	}
	// cachestat only where its answer is used.
	hit := (inline || small) && f.cached(off, len(b))
	if !hit && small {
		// A stream of small writes, each starting where the last ended
		// (not one small write among large ones): read the old data
		// ahead for the writes that follow.
		f.readAheadEdge(d, off)
	}
	done := 0
	if inline && hit {
		n, err := f.bf.WriteAtInline(b, off, 0)
		if err != nil && err != io.ErrShortWrite {
			return n, err
		}
		done = n // a write that stopped short: the scheduler's says why
		if done == len(b) {
			return done, nil
		}
	}
	n, err := f.bf.WriteAtFlags(b[done:], off+int64(done), rwf)
	done += n
	if err == nil && done < len(b) {
		err = io.ErrShortWrite
	}
	return done, err
}

// readAheadEdge asks the kernel to read the file's old data ahead of an
// edge write whose page is not cached (a recycled log: appends over old
// bytes that must stay): edgeWindow bytes from its page, once per window,
// in the background (posix_fadvise WILLNEED starts the reads and returns),
// so that the edge writes that follow find their pages cached instead of
// each waiting for a 4 KiB read. Past the size, or over holes and
// unwritten extents, there is nothing to read and it costs nothing. The
// caller holds d.writeMix for writing.
func (f *File) readAheadEdge(d *directIO, off int64) {
	p := f.pageDown(off)
	if p >= d.readAheadAt && p < d.readAheadAt+edgeWindow {
		return
	}
	d.readAheadAt = p
	sys.Fadvise(f.bufferedFd, p, edgeWindow, unix.FADV_WILLNEED) // advice only: an error changes nothing
}

// edgeWindow is how much readAheadEdge asks for at once.
const edgeWindow = 256 << 10

// noCachestat is set once the kernel refuses cachestat (Linux < 6.5).
var noCachestat atomic.Bool

// cached reports whether the page cache holds every page of [off,
// off+n), by cachestat(2): a lookup of those pages alone, which neither
// reads nor waits.
func (f *File) cached(off int64, n int) bool {
	if noCachestat.Load() {
		return false
	}
	first := f.pageDown(off)
	r := unix.CachestatRange{Off: uint64(first), Len: uint64(f.pageDown(off+int64(n)-1) + f.page - first)}
	var cs unix.Cachestat_t
	if err := sys.Cachestat(f.bufferedFd, &r, &cs); err != nil {
		if err == unix.ENOSYS || err == unix.EPERM {
			noCachestat.Store(true)
		}
		return false
	}
	return cs.Cache*uint64(os.Getpagesize()) >= r.Len
}

func (f *File) pageDown(off int64) int64 { return off - off%f.page }

// directWrite is an O_DIRECT write of whole blocks. It never runs while a
// buffered write of this File is in flight (d.writeMix): where the page
// cache uses large folios (ext4 since 6.16), a folio dirtied by a buffered
// write to a neighbouring page while a direct write is in flight cannot be
// dropped after it, and the kernel then reports EIO to the next fsync
// ("Page cache invalidation failure on direct I/O";
// dio_warn_stale_pagecache). A buffered write before or after is fine:
// the direct write writes the folio back first.
func (f *File) directWrite(d *directIO, b []byte, off int64, rwf uint32) (int, error) {
	d.registerSoon(f.handle)
	d.writeMix.RLock()
	defer d.writeMix.RUnlock()
	return f.handle.WriteAtFlags(b, off, rwf)
}
