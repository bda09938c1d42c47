//go:build linux

package diskio

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// io.ReaderFrom and io.WriterTo, so that io.Copy in or out of a File does
// not fall back to io.Copy's 32 KiB loop (one read, then one write, one
// at a time). Between two Files the kernel copies (copy_file_range on
// their buffered descriptors, as os.File does; copyFileRange). Where it
// cannot, and from other readers, a File copies through its own aligned
// memory: chunks of copyChunk bytes, copyDepth of them in flight, each
// one read and one write with no bounce (aligned offset, length and
// memory) except at an unaligned start or end. The sizes were chosen
// against 1 MiB x 8 (docs/notes/2026-11-28-design-figures.md). The memory
// (64 MiB) is the scheduler's, for the copy only.

var (
	copyChunk int64 = 4 << 20
	copyDepth       = 16
)

// WriteTo writes the file from its cursor to its end into w and advances
// the cursor, like os.File.WriteTo: io.Copy(w, f) uses it. Into another
// File, the chunks are read and written concurrently at their offsets.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	if p, ok := f.plainPath(); ok {
		return p.WriteTo(w)
	}
	if dst, ok := w.(*File); ok && dst != nil && !dst.plain() && dst != f && !dst.append {
		return copyFiles(dst, f)
	}
	if err := f.acquire("read"); err != nil {
		return 0, err
	}
	defer f.release()
	// The cursor is not held while w runs (w may be this File, or write
	// to it): like os.File's, it moves when the copy is done.
	off := f.cur.pos.Load()
	// Into anything else: a stream with reads in flight while w writes.
	if f.access == os.O_WRONLY {
		return 0, f.pathErr("read", syscall.EBADF)
	}
	var n int64
	var err error
	if f.direct != nil {
		var r *StreamReader
		r, err = f.NewStreamReader(off, StreamOptions{BufferSize: 1 << 20, ReadAhead: 4})
		if err == nil {
			n, err = io.CopyBuffer(plainWriter{w}, plainReader{r}, make([]byte, 1<<20))
			r.Close()
		}
	} else {
		n, err = f.writeCachedTo(w, off)
	}
	f.cur.pos.Store(off + n)
	return n, err
}

// ReadFrom writes what r holds, up to io.EOF, at the file's cursor and
// advances it, like os.File.ReadFrom: io.Copy(f, r) uses it. From another
// File the chunks are copied concurrently (see WriteTo); from anything
// else r is read in copyChunk pieces, each written whole (aligned, one
// request), so a slow r is written in pieces of that size, not as each
// read returns.
func (f *File) ReadFrom(r io.Reader) (int64, error) {
	if p, ok := f.plainPath(); ok {
		if src, ok := r.(*File); ok && src != nil && src.plain() {
			r = src.osf // os.File's splice and copy_file_range apply
		}
		return p.ReadFrom(r)
	}
	if src, ok := r.(*File); ok && src != nil && !src.plain() && src != f && !f.append {
		return copyFiles(f, src)
	}
	if f.append || f.access == os.O_RDONLY {
		return genericReadFrom(f, r) // Write's errors and O_APPEND's offsets
	}
	if err := f.acquire("write"); err != nil {
		return 0, err
	}
	defer f.release()
	if err := f.flush.failed(); err != nil {
		return 0, err // the first failed flush, for ever (sync_linux.go)
	}
	// The cursor is not held while r runs (r may read this File).
	off := f.cur.pos.Load()
	buf, err := f.copyBuffer()
	if err != nil {
		return 0, err
	}
	defer f.sched().FreeBuffer(buf)
	var done int64
	for {
		// Fill whole chunks: the writes stay aligned and large.
		m, rerr := io.ReadFull(r, buf)
		if m > 0 {
			var w int
			w, err = f.writeAt(buf[:m], off+done, 0)
			done += int64(w)
			if err != nil {
				err = f.pathErrAt("write", off+done, m-w, err)
				break
			}
		}
		if rerr != nil {
			if rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
				err = rerr
			}
			break
		}
	}
	f.cur.pos.Store(off + done)
	return done, err
}

// cachedChunks are WriteTo's buffers for page-cache files.
var cachedChunks = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// writeCachedTo is WriteTo for a page-cache file: reads of 256 KiB on the
// caller's goroutine (page-cache hits cost a copy, misses go through the
// ring, kernel read-ahead applies), each handed to w. A stream through
// the ring would take every read, hits too, off the caller, through the
// loop's thread hand-offs.
func (f *File) writeCachedTo(w io.Writer, off int64) (int64, error) {
	bp := cachedChunks.Get().(*[]byte)
	defer cachedChunks.Put(bp)
	buf := *bp
	var done int64
	for {
		n, err := f.readAt(buf, off+done)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			done += int64(m)
			if werr != nil {
				return done, werr
			}
			if m < n {
				return done, io.ErrShortWrite
			}
		}
		if err != nil {
			return done, f.pathErrAt("read", off+done, len(buf), err)
		}
		if n < len(buf) {
			return done, nil // end of file
		}
	}
}

// genericReadFrom is io.Copy's loop, hiding f's ReadFrom.
func genericReadFrom(f *File, r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{f}, r)
}

// copyFiles copies src from its cursor to its end to dst at its cursor,
// advancing both, copyDepth chunks at a time.
func copyFiles(dst, src *File) (int64, error) {
	if err := src.acquire("read"); err != nil {
		return 0, err
	}
	defer src.release()
	if err := dst.acquire("write"); err != nil {
		return 0, err
	}
	defer dst.release()
	if dst.access == os.O_RDONLY {
		// os.File's io.Copy between files fails here, in copy_file_range.
		return 0, dst.pathErr("write", os.NewSyscallError("copy_file_range", syscall.EBADF))
	}
	// Both cursors are held for the copy; in address order, so that two
	// copies in opposite directions cannot deadlock.
	a, b := &src.cur.mu, &dst.cur.mu
	if uintptr(unsafe.Pointer(a)) > uintptr(unsafe.Pointer(b)) {
		a, b = b, a
	}
	a.Lock()
	defer a.Unlock()
	b.Lock()
	defer b.Unlock()
	soff := src.cur.pos.Load()
	doff := dst.cur.pos.Load()
	if n, ok, err := copyFileRange(dst, src, soff, doff); ok {
		src.cur.pos.Store(soff + n)
		dst.cur.pos.Store(doff + n)
		return n, err
	}
	// On ext4, direct writes that extend a file take the inode lock
	// exclusively and run one at a time; into allocated (fallocated)
	// blocks below the size they run together. So the destination is
	// grown to its final size first, and cut back to what was copied if
	// the copy stops early. (Measured, 512 MiB copy + Sync, 1 MiB chunks x 4:
	// 3.9-4.9 s preallocated against 6.4-8.4 s not.)
	total, err := src.sizeNow()
	if err != nil {
		return 0, src.pathErr("read", err)
	}
	dsize, err := dst.sizeNow()
	if err != nil {
		return 0, dst.pathErr("write", err)
	}
	grown := false
	if want := total - soff; want > 0 && doff+want > dsize {
		grown = dst.preallocate("write", 0, doff, want) == nil
	}
	n, err := src.pipe(soff, func(p []byte, at int64) (int, error) {
		if err := dst.flush.failed(); err != nil {
			return 0, err
		}
		w, err := dst.writeAt(p, doff+(at-soff), 0)
		if err != nil {
			return w, dst.pathErrAt("write", doff+(at-soff), len(p), err)
		}
		return w, nil
	})
	if grown && n < total-soff {
		if terr := dst.truncate(max(dsize, doff+n)); terr != nil && err == nil {
			err = dst.pathErr("truncate", terr)
		}
	}
	src.cur.pos.Store(soff + n)
	dst.cur.pos.Store(doff + n)
	return n, err
}

// copyFileRange copies src from soff to its end into dst at doff in the
// kernel, with copy_file_range(2) on the two Files' buffered descriptors:
// what os.File's io.Copy between two files does, a reflink where the
// filesystem shares extents (XFS, btrfs) and an in-kernel copy through
// the page cache elsewhere (ext4), which the direct path then sees as it
// sees any other descriptor's writes (the kernel writes back a range's
// pages before direct I/O on it). The direct chunked copy is slower (it
// writes every byte to the disk before it returns; BenchmarkCopy,
// docs/notes/2026-11-28-design-figures.md). ok is false when the
// kernel refuses before copying anything (different filesystems, an old
// kernel): the caller then copies through its own memory.
func copyFileRange(dst, src *File, soff, doff int64) (int64, bool, error) {
	if src.access == os.O_WRONLY {
		return 0, false, nil // the chunked path reports it as os.File would
	}
	total, err := src.sizeNow()
	if err != nil {
		return 0, true, src.pathErr("read", err)
	}
	// The copy is a buffered write of dst's: no direct write of dst's
	// beside it (directWrite).
	dst.direct.beginBuffered()
	defer dst.direct.endBuffered()
	var done int64
	for soff+done < total {
		so, do := soff+done, doff+done
		m, cerr := sys.CopyFileRange(src.bufferedFd, &so, dst.bufferedFd, &do, int(min(total-soff-done, 1<<30)), 0)
		if cerr != nil {
			if done == 0 && (cerr == unix.EXDEV || cerr == unix.EINVAL || cerr == unix.EOPNOTSUPP ||
				cerr == unix.ENOSYS || cerr == unix.EBADF || cerr == unix.EPERM) {
				return 0, false, nil
			}
			err = dst.pathErrAt("write", doff+done, int(total-soff-done), os.NewSyscallError("copy_file_range", cerr))
			break
		}
		if m == 0 {
			break // the source ended early (another descriptor cut it)
		}
		done += int64(m)
	}
	dst.dur.changed()
	return done, true, err
}

// pipe reads f from off to its end in chunks and hands each to write,
// with its offset, copyDepth chunks at once (write must be safe for
// concurrent use). It returns the bytes written from off
// on: with an error, the length of the prefix that is known written.
func (f *File) pipe(off int64, write func(p []byte, at int64) (int, error)) (int64, error) {
	size, err := f.sizeNow()
	if err != nil {
		return 0, f.pathErr("read", err)
	}
	if off >= size {
		return 0, nil
	}
	// The first chunk ends on a chunk boundary, so the rest are aligned.
	first := min(copyChunk-off%copyChunk, size-off)
	chunks := 1 + (size-off-first+copyChunk-1)/copyChunk
	type result struct {
		n   int // bytes written
		err error
	}
	results := make([]result, chunks)
	bounds := func(i int64) (int64, int64) {
		if i == 0 {
			return off, off + first
		}
		s := off + first + (i-1)*copyChunk
		return s, min(s+copyChunk, size)
	}
	do := func(i int64, buf []byte) bool {
		s, e := bounds(i)
		p := buf[:e-s]
		n, rerr := f.readAt(p, s) // short, with no error, if the file shrank
		var w int
		var werr error
		if n > 0 {
			w, werr = write(p[:n], s)
		}
		results[i] = result{w, werr}
		if werr == nil && rerr != nil {
			results[i].err = f.pathErrAt("read", s, len(p), rerr)
		}
		return results[i].err == nil && n == len(p)
	}
	var next int64
	var mu sync.Mutex
	stop := false
	var ferr error // a buffer could not be had
	var wg sync.WaitGroup
	for range min(int64(copyDepth), chunks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf, err := f.copyBuffer()
			if err != nil {
				// Fewer in flight; the others do every chunk.
				mu.Lock()
				ferr = err
				mu.Unlock()
				return
			}
			defer f.sched().FreeBuffer(buf)
			for {
				mu.Lock()
				i := next
				next++
				if stop || i >= chunks {
					mu.Unlock()
					return
				}
				mu.Unlock()
				if !do(i, buf) {
					mu.Lock()
					stop = true
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if ferr != nil && next == 0 {
		return 0, ferr
	}
	// The prefix written in full, and the first error in file order.
	var n int64
	for i := range chunks {
		s, e := bounds(i)
		r := results[i]
		n += int64(r.n)
		if r.err != nil {
			return n, r.err
		}
		if int64(r.n) < e-s {
			return n, nil // end of file came early
		}
	}
	return n, nil
}

// copyBuffer is one chunk's memory, from the scheduler and given back to
// it after the copy (the bounce pool would keep it for good).
func (f *File) copyBuffer() ([]byte, error) {
	b, err := f.sched().AllocBuffer(int(copyChunk))
	if err != nil {
		return nil, f.pathErr("read", err)
	}
	return b, nil
}

// plainReader and plainWriter hide WriteTo and ReadFrom from
// io.CopyBuffer.
type (
	plainReader struct{ io.Reader }
	plainWriter struct{ io.Writer }
)
