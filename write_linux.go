//go:build linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The write path: Write, WriteAt, O_APPEND, and partial blocks under
// page-range locks.

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
	if f.acc == os.O_RDONLY {
		return 0, f.pathErr("write", syscall.EBADF)
	}
	if err := f.flush.failed(); err != nil {
		return 0, err // the first failed flush, for ever (sync_linux.go)
	}
	if len(b) == 0 {
		return 0, nil
	}
	f.posMu.Lock()
	defer f.posMu.Unlock()
	var n int
	var off int64
	var err error
	if f.append {
		n, err = f.appendWrite(b)
		f.mu.Lock()
		off = f.pos - int64(n) // where the kernel put it
		f.mu.Unlock()
	} else {
		f.mu.Lock()
		off = f.pos
		f.mu.Unlock()
		n, err = f.writeDurably(b, off)
		f.mu.Lock()
		f.pos = off + int64(n)
		f.mu.Unlock()
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
// The cursor ends at the file's end, as the kernel leaves it.
func (f *File) appendWrite(b []byte) (int, error) {
	seq, _, err := f.beginChange()
	if err != nil {
		return 0, err
	}
	rwf := f.dur.take()
	n, err := f.s.WriteAtFlags(f.bfd, b, 0, unix.RWF_APPEND|rwf)
	f.dur.done(rwf)
	var st unix.Stat_t
	serr := unix.Fstat(f.bfd, &st)
	f.mu.Lock()
	if serr == nil {
		f.pos = st.Size
		f.known.end(seq, &st)
	} else {
		f.known.end(seq, nil)
	}
	f.mu.Unlock()
	if err == nil {
		err = serr
	}
	return n, err
}

// writeDurably is writeAt for Write and WriteAt: durable in one trip
// when the File expects a flush right after it (through_linux.go).
func (f *File) writeDurably(b []byte, off int64) (int, error) {
	rwf := f.dur.take()
	if !f.direct {
		rwf = 0 // a buffered RWF_DSYNC write would pay the writeback alone
	}
	n, err := f.writeAt(b, off, rwf)
	f.dur.done(rwf)
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
		return 0, &fs.PathError{Op: "writeat", Path: f.name, Err: errors.New("negative offset")}
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
	n, err := f.writeDurably(b, off)
	return n, f.pathErrAt("write", off, len(b), err)
}

// writeAt writes b at off; rwf are RWF_* flags for every write it issues
// (RWF_DSYNC: WriteAtDSync).
func (f *File) writeAt(b []byte, off int64, rwf uint32) (int, error) {
	if f.acc == os.O_RDONLY {
		return 0, syscall.EBADF
	}
	if len(b) == 0 {
		return 0, nil
	}
	if off+int64(len(b)) < 0 {
		return 0, syscall.EINVAL // the kernel's check: the range overflows
	}
	if !f.direct {
		return f.writeCached(b, off, rwf) // page cache first (buffered_linux.go)
	}
	done := 0
	for done < len(b) {
		n, err := f.writeChunk(b[done:], off+int64(done), rwf)
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// writeChunk writes a prefix of b at off, at most maxBounce bytes of
// aligned span, and never a byte past what it was given: no reader, of
// this File or another descriptor, ever sees a size or bytes beyond what
// was written (no padding to trim, so Sync and Close never truncate).
//
// Blocks that lie below the file's size as the kernel has it are written
// whole with O_DIRECT; the bytes of partial edge blocks the write does not
// cover come from what the File knows (tail_linux.go) and are read only
// when unknown. A last block that reaches past the kernel's size cannot be
// written whole without growing the file by padding: its page, from the
// write's start if the write lies within it, goes through the buffered
// descriptor with its exact length. The kernel keeps the two coherent: a
// direct read or write of a range first writes back and drops the page
// cache's pages of that range. Pages, not blocks, are locked, so that no
// buffered write of ours is in flight in a page a direct write of ours
// covers (the kernel could not drop that page: "Page cache invalidation
// failure on direct I/O").
func (f *File) writeChunk(b []byte, off int64, rwf uint32) (int, error) {
	start, end := f.alignDown(off), f.alignUp(off+int64(len(b)))
	if end-start > maxBounce {
		end = start + maxBounce
		b = b[:end-off]
	}
	wend := off + int64(len(b))
	ls, le := f.pageDown(start), f.pageDown(end+f.page-1)
	f.locks.lock(ls, le)
	defer f.locks.unlock(ls, le)

	if f.aligned(b, off) {
		// Whole blocks need nothing the File knows. With other changes
		// of this File under way (group commit) the file's state cannot
		// be recorded anyway: skip the two fstat calls.
		f.mu.Lock()
		busy := f.known.inflight > 0
		var seq uint64
		if busy {
			seq = f.known.begin()
		}
		f.mu.Unlock()
		if busy {
			n, err := f.directWrite(b, off, rwf)
			f.mu.Lock()
			f.known.wrote(off, b[:max(n, 0)])
			f.known.end(seq, nil)
			f.mu.Unlock()
			return n, err
		}
	}
	seq, ksize, err := f.beginChange()
	if err != nil {
		return 0, err
	}
	n, err := f.writeSpan(b, off, start, end, wend, ksize, seq, rwf)
	f.endChange(seq, false, nil) // writeSpan recorded what it wrote
	return n, err
}

// writeSpan is writeChunk's I/O, under the lock of the span's pages.
func (f *File) writeSpan(b []byte, off, start, end, wend, ksize int64, seq uint64, rwf uint32) (int, error) {
	// dend: the direct part is the span [start, dend); the rest, up to
	// wend, is buffered.
	dend := end
	if end > ksize && wend < end {
		dend = max(f.pageDown(wend), start)
		if dend <= off {
			dend = start // all of it buffered
		}
	}
	done := 0
	last := f.alignDown(wend) // the block holding the write's end
	if dend > start {
		dlen := min(dend, wend) - off
		// RWF_DSYNC or RWF_SYNC go with the last write only: its flush
		// covers the direct part, which completed before it began.
		drwf := rwf
		if dend < end {
			drwf = 0
		}
		if off == start && min(dend, wend) == dend && f.aligned(b[:dlen], off) {
			n, err := f.directWrite(b[:dlen], off, drwf)
			f.mu.Lock()
			f.known.wrote(off, b[:n])
			f.mu.Unlock()
			if err != nil || dend == end {
				return n, err
			}
			done = n
		} else {
			buf := f.getBounce(int(dend - start))
			defer f.putBounce(buf)
			if err := f.fillEdge(buf, start, off, wend, ksize, seq); err != nil {
				return 0, err
			}
			if tail := dend - f.block; tail > start {
				if err := f.fillEdge(buf[tail-start:], tail, off, wend, ksize, seq); err != nil {
					return 0, err
				}
			}
			copy(buf[off-start:], b[:dlen])
			n, err := f.directWrite(buf, start, drwf)
			written := 0
			if n > int(off-start) {
				written = min(int(dlen), n-int(off-start))
			}
			if err == nil && n < len(buf) {
				err = io.ErrShortWrite
			}
			f.mu.Lock()
			f.known.wrote(start, buf[:max(n, 0)])
			if err == nil && wend%f.block != 0 && last < dend {
				f.known.put(last, buf[last-start:last-start+f.block])
			}
			f.mu.Unlock()
			if err != nil || dend == end {
				return written, err
			}
			done = written
		}
	}
	// The buffered rest: exact bytes, no read; the kernel fills the page.
	at := off + int64(done)
	rest := b[done:]
	var blk []byte
	if wend%f.block != 0 {
		// Keep the new last block, if its other bytes are known without
		// a read (they always are on a new, preallocated or appended-to
		// file); else forget it.
		blk = f.getBounce(int(f.block))
		defer f.putBounce(blk)
		if !f.knownBlock(blk, last, ksize, seq) {
			blk = nil
		}
	}
	f.mixing.Lock()
	n, err := f.s.WriteAtFlags(f.bfd, rest, at, rwf)
	f.mixing.Unlock()
	f.mu.Lock()
	f.known.wrote(at, rest[:max(n, 0)])
	if err == nil && n == len(rest) && blk != nil {
		from := max(at, last)
		copy(blk[from-last:], rest[from-at:])
		f.known.put(last, blk)
	}
	f.mu.Unlock()
	return done + n, err
}

// fillEdge prepares the block at offset at for a write of [off, end):
// unless the write covers it whole, its current bytes, zeros past the
// kernel's size ksize; read only if the File does not know them.
func (f *File) fillEdge(blk []byte, at, off, end, ksize int64, seq uint64) error {
	blk = blk[:f.block]
	if off <= at && at+f.block <= end {
		return nil // overwritten whole
	}
	if f.knownBlock(blk, at, ksize, seq) {
		return nil
	}
	return f.readKnown(blk, at, ksize, seq)
}

func (f *File) pageDown(off int64) int64 { return off - off%f.page }

// directWrite is an O_DIRECT write of whole blocks. It never runs while a
// buffered write of this File is in flight (f.mixing): page-range locks
// are not enough where the page cache uses large folios (ext4 since 6.16),
// since a folio dirtied by a buffered write to a neighbouring page while
// a direct write is in flight cannot be dropped after it, and the kernel
// then reports EIO to the next fsync ("Page cache invalidation failure
// on direct I/O"; dio_warn_stale_pagecache). A buffered write before or
// after is fine: the direct write writes the folio back first.
func (f *File) directWrite(b []byte, off int64, rwf uint32) (int, error) {
	f.mixing.RLock()
	defer f.mixing.RUnlock()
	return f.s.WriteAtFlags(f.fd, b, off, rwf)
}

// rangeLocks locks byte ranges [start, end) of a file. Writers of
// overlapping block spans wait for each other; disjoint spans proceed in
// parallel.
type rangeLocks struct {
	mu     sync.Mutex
	cond   *sync.Cond
	active [][2]int64
}

func (l *rangeLocks) lock(start, end int64) {
	l.mu.Lock()
	if l.cond == nil {
		l.cond = sync.NewCond(&l.mu)
	}
	for l.overlaps(start, end) {
		l.cond.Wait()
	}
	l.active = append(l.active, [2]int64{start, end})
	l.mu.Unlock()
}

func (l *rangeLocks) overlaps(start, end int64) bool {
	for _, r := range l.active {
		if start < r[1] && r[0] < end {
			return true
		}
	}
	return false
}

func (l *rangeLocks) unlock(start, end int64) {
	l.mu.Lock()
	for i, r := range l.active {
		if r[0] == start && r[1] == end {
			l.active[i] = l.active[len(l.active)-1]
			l.active = l.active[:len(l.active)-1]
			break
		}
	}
	l.cond.Broadcast()
	l.mu.Unlock()
}
