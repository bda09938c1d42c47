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
)

// The write path: Write, WriteAt, and read-modify-write of partial edge
// blocks under block-range locks.

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
	f.mu.Lock()
	off := f.pos
	f.mu.Unlock()
	if f.append {
		size, err := f.sizeNow()
		if err != nil {
			return 0, f.pathErr("write", err)
		}
		off = size
	}
	n, err := f.writeAt(b, off, 0)
	f.mu.Lock()
	f.pos = off + int64(n)
	f.mu.Unlock()
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	return n, f.pathErrAt("write", off, len(b), err)
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
	n, err := f.writeAt(b, off, 0)
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
		f.startWrite()
		n, err := f.writeCached(b, off, rwf) // page cache first (buffered_linux.go)
		f.grow(off+int64(n), off+int64(n))
		return n, err
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

// writeChunk writes a prefix of b at off through one aligned span of at
// most maxBounce bytes, reading the partial edge blocks first. The blocks
// of the span are locked, so writers of other bytes of the same blocks
// wait instead of overwriting this update with stale data.
func (f *File) writeChunk(b []byte, off int64, rwf uint32) (int, error) {
	start, end := f.alignDown(off), f.alignUp(off+int64(len(b)))
	if end-start > maxBounce {
		end = start + maxBounce
		b = b[:end-off]
	}
	f.locks.lock(start, end)
	defer f.locks.unlock(start, end)

	if f.aligned(b, off) {
		f.startWrite()
		n, err := f.s.WriteAtFlags(f.fd, b, off, rwf)
		f.grow(off+int64(n), off+int64(n))
		return n, err
	}
	buf := f.getBounce(int(end - start))
	defer f.putBounce(buf)
	size, err := f.sizeNow()
	if err != nil {
		return 0, err
	}
	// Edge blocks that hold data we keep are read first; the bytes of
	// them past the logical size are zeros, as a hole reads.
	wend := off + int64(len(b))
	if err := f.fillEdge(buf, start, off, wend, size); err != nil {
		return 0, err
	}
	if last := end - f.block; last > start {
		if err := f.fillEdge(buf[last-start:], last, off, wend, size); err != nil {
			return 0, err
		}
	}
	copy(buf[off-start:], b)
	f.startWrite()
	n, err := f.s.WriteAtFlags(f.fd, buf, start, rwf)
	written := 0
	if n > int(off-start) {
		written = min(len(b), n-int(off-start))
	}
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	f.grow(off+int64(written), start+int64(n))
	return written, err
}

// fillEdge prepares the block at offset at for a read-modify-write of
// [off, end): unless the write covers it whole, its current bytes below the
// logical size, zeros above.
func (f *File) fillEdge(blk []byte, at, off, end, size int64) error {
	blk = blk[:f.block]
	if off <= at && at+f.block <= end {
		return nil // overwritten whole
	}
	if at >= size {
		clear(blk)
		return nil
	}
	n, err := f.s.ReadAt(f.fd, blk, at)
	if err != nil {
		return err
	}
	if keep := size - at; keep < int64(n) {
		n = int(keep)
	}
	clear(blk[n:])
	return nil
}

// startWrite counts a write in flight; grow counts it out.
func (f *File) startWrite() {
	f.mu.Lock()
	f.writing++
	f.changed()
	f.mu.Unlock()
}

// grow records a write that ended at logical end and on-disk end.
func (f *File) grow(end, diskEnd int64) {
	f.mu.Lock()
	f.size = max(f.size, end)
	f.disk = max(f.disk, diskEnd)
	f.writing--
	f.changed()
	f.mu.Unlock()
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
