//go:build linux

package pebblevfs

import (
	"io"
	"io/fs"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/diskio-go/diskio"
)

// writeBuffer is how much of a data file is gathered before it is written:
// one large aligned write instead of Pebble's 4 KiB bufio.Writer chunks.
const writeBuffer = 256 << 10

// unit is the alignment of the gathering buffers: the page size, a
// multiple of any O_DIRECT alignment of 512 to 4096.
const unit = 4096

// writeBehind is how many full buffers of a data file may be on their way
// to the disk while the next one fills. They are written one after
// another: each extends the file, and ext4 runs a write that extends a
// file under the inode's exclusive lock until its data is on the disk,
// on one of io_uring's worker threads (io-wq). Sent together, the writes
// of one file took as many workers, all but one waiting for that lock.
const writeBehind = 4

// writeFile is a direct data file (sstable, blob) written front to back:
// Pebble's writes are gathered in an aligned buffer, the window
// [base, base+writeBuffer) of the file, and a full buffer is written in
// the background while the next one fills, as the page cache's write-back
// would. Whatever is left is written exactly, at a sync, a read, WriteAt
// and Close: diskio's File writes the whole blocks O_DIRECT and a partial
// last block through the page cache, so the file never holds a byte the
// caller did not write.
//
// With the FS's fresh cache on, the buffers are kept after their write
// (not reused) for the reads that follow soon: see freshCache.
type writeFile struct {
	f     *diskio.File
	dev   vfs.DeviceID
	cache *freshCache
	fresh *freshFile // nil: not kept

	mu      sync.Mutex // Write and Sync come one at a time; Stat and ReadAt may not
	buf     []byte
	base    int64 // file offset of buf[0], a multiple of writeBuffer while fresh is kept
	n       int   // the next Write goes to base+n
	flushed int   // buf[:flushed] is in the file (or is not ours, before the first Write)
	err     error // first write error: the file's contents are unknown after it
	pending []*pendingWrite
}

type pendingWrite struct {
	buf  []byte
	err  error
	done chan struct{}
}

var _ vfs.File = (*writeFile)(nil)

func newWriteFile(f *diskio.File, fi vfs.FileInfo, cache *freshCache) *writeFile {
	return &writeFile{f: f, dev: fi.DeviceID(), cache: cache, fresh: cache.begin(fi), buf: alignedBuf(writeBuffer, unit)}
}

func (w *writeFile) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	done := 0
	for done < len(p) {
		c := copy(w.buf[w.n:], p[done:])
		w.n += c
		done += c
		if w.n == len(w.buf) {
			if err := w.behind(); err != nil {
				return done - c, err
			}
		}
	}
	return done, nil
}

// behind writes the full buffer in the background, after the ones before
// it, and moves the window on, waiting for the oldest write when
// writeBehind of them are pending: a compaction goes on filling the next
// 256 KiB while the last ones travel to the disk.
func (w *writeFile) behind() error {
	pw := &pendingWrite{buf: w.buf, done: make(chan struct{})}
	data, off := w.buf[w.flushed:], w.base+int64(w.flushed)
	base, ff := w.base, w.fresh
	var prev *pendingWrite
	if len(w.pending) > 0 {
		prev = w.pending[len(w.pending)-1]
	}
	go func() {
		if prev != nil {
			if <-prev.done; prev.err != nil {
				// The file's contents are unknown after it: write
				// nothing more.
				pw.err = prev.err
				close(pw.done)
				return
			}
		}
		_, pw.err = w.f.WriteAt(data, off)
		if pw.err == nil && ff != nil {
			w.cache.add(ff, base, pw.buf)
		}
		close(pw.done)
	}()
	w.pending = append(w.pending, pw)
	w.base += int64(len(w.buf))
	w.n, w.flushed = 0, 0
	w.buf = nil
	if len(w.pending) >= writeBehind {
		old := w.pending[0]
		w.pending = w.pending[1:]
		<-old.done
		if old.err != nil {
			return w.fail(old.err)
		}
		if ff == nil {
			w.buf = old.buf // not kept: reuse it
		}
	}
	if w.buf == nil {
		w.buf = alignedBuf(writeBuffer, unit)
	}
	return nil
}

// drain waits for the writes in the background.
func (w *writeFile) drain() error {
	var first error
	for _, pw := range w.pending {
		<-pw.done
		if pw.err != nil && first == nil {
			first = pw.err
		}
	}
	w.pending = w.pending[:0]
	if first != nil {
		return w.fail(first)
	}
	return nil
}

func (w *writeFile) fail(err error) error {
	if w.err == nil {
		w.err = err
		w.cache.drop(w.fresh)
		w.fresh = nil
	}
	return err
}

// settle puts everything written in the file, exactly.
func (w *writeFile) settle() error {
	if err := w.drain(); err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	if w.n > w.flushed {
		if _, err := w.f.WriteAt(w.buf[w.flushed:w.n], w.base+int64(w.flushed)); err != nil {
			return w.fail(err)
		}
		w.flushed = w.n
	}
	return nil
}

func (w *writeFile) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.settle(); err != nil {
		return err
	}
	return w.f.Sync()
}

func (w *writeFile) SyncData() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.settle(); err != nil {
		return err
	}
	return w.f.Datasync()
}

// SyncTo writes out what is gathered below length and promises nothing
// more, as sync_file_range does (see the package doc).
func (w *writeFile) SyncTo(length int64) (fullSync bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return false, w.err
	}
	if length > w.base+int64(w.flushed) {
		return false, w.settle()
	}
	return false, nil
}

// Close writes what is left and closes the file; a file written without
// error stays in the fresh cache for its readers.
func (w *writeFile) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.settle()
	if err == nil && w.fresh != nil {
		if w.n > 0 {
			w.cache.add(w.fresh, w.base, w.buf[:w.n])
		}
		w.cache.seal(w.fresh, w.f)
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// size is what the caller wrote: the file's size, as writes go front to
// back from the start (the file is created empty, or opened at 0).
func (w *writeFile) size(fileSize int64) int64 { return max(w.base+int64(w.n), fileSize) }

// ReadAt reads what was written, gathered or not.
func (w *writeFile) ReadAt(p []byte, off int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.settle(); err != nil {
		return 0, err
	}
	return w.f.ReadAt(p, off)
}

// Read is not used by Pebble on files it writes.
func (w *writeFile) Read(p []byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: w.f.Name(), Err: errUnsupported}
}

// WriteAt writes outside the append stream: what is gathered goes first,
// then p, and the next Write goes where it would have. The file leaves
// the fresh cache.
func (w *writeFile) WriteAt(p []byte, off int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.settle(); err != nil {
		return 0, err
	}
	w.cache.drop(w.fresh)
	w.fresh = nil
	n, err := w.f.WriteAt(p, off)
	if err != nil {
		return n, w.fail(err)
	}
	return n, nil
}

func (w *writeFile) Preallocate(off, n int64) error { return preallocate(w.f, off, n) }

// Prefetch does nothing: see readFile.Prefetch.
func (w *writeFile) Prefetch(off, n int64) error { return nil }

func (w *writeFile) Fd() uintptr { return w.f.Fd() }

func (w *writeFile) Stat() (vfs.FileInfo, error) {
	fi, err := w.f.Stat()
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	size := w.size(fi.Size())
	w.mu.Unlock()
	return sizedInfo{fileInfo{fi, w.dev}, size}, nil
}

var _ io.ReaderAt = (*writeFile)(nil)
