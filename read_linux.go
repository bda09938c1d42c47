//go:build linux

package diskio

import (
	"io"
	"os"
	"syscall"
)

// The read path: Read, ReadAt, and bounce reads for unaligned requests.

// Read reads up to len(b) bytes at the cursor and advances it. At end of
// file it returns 0, io.EOF.
func (f *File) Read(b []byte) (int, error) {
	if p, ok := f.plainPath(); ok {
		return p.Read(b)
	}
	if err := f.acquire("read"); err != nil {
		return 0, err
	}
	defer f.release()
	f.cur.mu.Lock()
	defer f.cur.mu.Unlock()
	if len(b) == 0 {
		return 0, nil
	}
	off := f.cur.pos.Load()
	var n int
	var err error
	if f.direct == nil && f.access != os.O_WRONLY && !f.handle.Missed() && !f.cache.noRead.Load() {
		// A warm page-cache File: one preadv2 when the cache holds
		// the range. A regular file's read(2), and so os.File's Read,
		// is short only at end of file; RWF_NOWAIT's is also short
		// where the cache stops holding the file, which is always a
		// page boundary (the cache holds whole pages), while the end
		// of file is one only when the size is a multiple of the page.
		// So a result that ends inside a page is the end of the file,
		// as it is; one that ends on a boundary goes on as readAt's
		// does (one more attempt, which says 0 at the end, or the rest
		// through the scheduler). EAGAIN or a refusal takes readAt's
		// way.
		n, err = f.handle.ReadAtNowait(b, off)
		if err != nil || n < len(b) && (off+int64(n))%f.page == 0 {
			n, err = f.readCachedRest(b, off, n, err)
		}
	} else {
		n, err = f.readAt(b, off)
	}
	err = f.pathErrAt("read", off, len(b), err)
	f.cur.pos.Add(int64(n))
	if n == 0 && err == nil {
		err = io.EOF
	}
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// ReadAt reads len(b) bytes at off. It returns n < len(b) only with an
// error, io.EOF at end of file.
func (f *File) ReadAt(b []byte, off int64) (int, error) {
	if p, ok := f.plainPath(); ok {
		return p.ReadAt(b, off)
	}
	// The order of checks is os.File's.
	if off < 0 {
		return 0, negativeOffset("readat", f.name)
	}
	if len(b) == 0 {
		return 0, nil
	}
	if err := f.acquire("read"); err != nil {
		return 0, err
	}
	defer f.release()
	n, err := f.readAt(b, off)
	if err == nil {
		if n < len(b) {
			return n, io.EOF
		}
		return n, nil
	}
	return n, f.pathErrAt("read", off, len(b), err)
}

// readAt reads what lies in [off, off+len(b)) below the logical size; it
// returns fewer bytes (and no error) at end of file.
func (f *File) readAt(b []byte, off int64) (int, error) {
	if f.access == os.O_WRONLY {
		return 0, syscall.EBADF
	}
	if off+int64(len(b)) < 0 {
		return 0, syscall.EINVAL // the kernel's check: the range overflows
	}
	// The kernel's end of file is the truth: the File never writes past
	// what it was given (write_linux.go).
	d := f.direct
	if d == nil {
		return f.readCached(b, off) // page cache first (pagecache_linux.go)
	}
	d.registerSoon(f.handle)
	if d.aligned(b, off) {
		return f.handle.ReadAt(b, off)
	}
	return f.bounceRead(d, b, off)
}

// bounceRead reads through aligned bounce buffers, at most maxBounce at a
// time, for a direct File; it returns fewer bytes (and no error) at end
// of file.
func (f *File) bounceRead(d *directIO, b []byte, off int64) (int, error) {
	done := 0
	for done < len(b) {
		chunk := b[done:]
		start := d.alignDown(off + int64(done))
		end := d.alignUp(off + int64(done+len(chunk)))
		if end-start > maxBounce {
			end = start + maxBounce
			chunk = chunk[:end-(off+int64(done))]
		}
		buf, err := f.getBounce(int(end - start))
		if err != nil {
			return done, err
		}
		n, err := f.handle.ReadAt(buf, start)
		skip := int(off + int64(done) - start)
		m := 0
		if n > skip {
			m = copy(chunk, buf[skip:n])
		}
		f.putBounce(buf)
		done += m
		if err != nil || m < len(chunk) {
			return done, err // end of file
		}
	}
	return done, nil
}
