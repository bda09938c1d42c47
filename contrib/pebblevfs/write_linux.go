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

// unit is the alignment of every write: the page size, a multiple of any
// O_DIRECT alignment of 512 to 4096 and of the physical block here.
const unit = 4096

// writeFile writes a direct diskio File front to back through an aligned
// buffer (data files: full buffers are written in the background), so every write covers whole blocks and diskio never reads an
// edge block to modify it. The buffer is the window [base, base+len(buf))
// of the file; buf[:n] is what the caller wrote there, buf[n:fill] the
// file's earlier bytes (a reused WAL) and zeros after that; buf[:flushed]
// is on disk. A partial last block goes to disk padded (with the earlier
// bytes or zeros); the padding past the logical size is cut before every
// sync and at Close.
type writeFile struct {
	f       *diskio.File
	dev     vfs.DeviceID
	through bool // write on every Write (WAL), not only when the buffer fills
	dsync   bool // opened O_DSYNC: a completed write is durable

	mu      sync.Mutex // Write and Sync come one at a time; Stat and ReadAt may not
	buf     []byte
	base    int64 // file offset of buf[0], a multiple of unit
	n       int   // caller's bytes in buf: the next Write goes to base+n
	flushed int   // buf[:flushed] is on disk
	floor   int64 // the file's size before our writes: bytes we must keep
	diskEnd int64 // the file's size on disk, padding included
	err     error // first write error: the file's contents are unknown after it
	pending []*pendingWrite
}

// writeBehind is how many full buffers of a data file may be on their way
// to the disk while the next one fills.
const writeBehind = 4

type pendingWrite struct {
	buf  []byte
	err  error
	done chan struct{}
}

var _ vfs.File = (*writeFile)(nil)

func newWriteFile(f *diskio.File, through, dsync bool) (vfs.File, error) {
	dev, err := deviceOf(f.Name())
	if err != nil {
		f.Close()
		return nil, err
	}
	if !f.Direct() { // buffered: the kernel aligns nothing
		if through {
			return &readFile{f: f, dev: dev}, nil
		}
		return &gatherFile{readFile: readFile{f: f, dev: dev}, buf: make([]byte, 0, writeBuffer)}, nil
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := fi.Size()
	w := &writeFile{f: f, dev: dev, through: through, dsync: dsync, floor: size, diskEnd: size}
	w.buf = alignedBuf(writeBuffer, unit)
	if err := w.window(0); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// window moves the buffer to the aligned block holding pos, loading the
// file's existing bytes there (below floor) so padded writes keep them.
func (w *writeFile) window(pos int64) error {
	w.base = pos - pos%unit
	w.n = int(pos - w.base)
	w.flushed = w.n
	fill := 0
	if w.base < w.floor {
		m, err := readFull(w.f, w.buf[:min(int64(len(w.buf)), alignUp(w.floor-w.base))], w.base)
		if err != nil {
			return err
		}
		fill = int(min(int64(m), w.floor-w.base))
	}
	clear(w.buf[fill:])
	return nil
}

func alignUp(n int64) int64 { return (n + unit - 1) / unit * unit }

// size is the logical size: what the caller wrote, or more if the file
// was longer to begin with.
func (w *writeFile) size() int64 { return max(w.base+int64(w.n), w.floor) }

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
			var err error
			if w.through {
				err = w.flush()
			} else {
				err = w.behind()
			}
			if err != nil {
				return done - c, err
			}
			if err := w.window(w.base + int64(len(w.buf))); err != nil {
				return done, w.fail(err)
			}
		}
	}
	if w.through {
		if err := w.flush(); err != nil {
			return 0, err
		}
	}
	return done, nil
}

// flush writes the blocks of buf[flushed:n] that are not on disk yet: the
// partial block at flushed again, whole, and the last one padded.
func (w *writeFile) flush() error {
	if w.n == w.flushed {
		return nil
	}
	from := w.flushed - w.flushed%unit
	to := int(alignUp(int64(w.n)))
	if _, err := w.f.WriteAt(w.buf[from:to], w.base+int64(from)); err != nil {
		return w.fail(err)
	}
	w.flushed = w.n
	w.diskEnd = max(w.diskEnd, w.base+int64(to))
	return nil
}

// behind writes the full buffer in the background and takes another,
// waiting for the oldest write when writeBehind of them are in flight:
// a compaction goes on filling the next 256 KiB while the last one
// travels to the disk, as it would with the page cache's writeback.
func (w *writeFile) behind() error {
	from := w.flushed - w.flushed%unit
	pw := &pendingWrite{buf: w.buf, done: make(chan struct{})}
	data, off := w.buf[from:], w.base+int64(from)
	go func() {
		_, pw.err = w.f.WriteAt(data, off)
		close(pw.done)
	}()
	w.pending = append(w.pending, pw)
	w.flushed = w.n
	w.diskEnd = max(w.diskEnd, w.base+int64(len(w.buf)))
	if len(w.pending) < writeBehind {
		w.buf = alignedBuf(writeBuffer, unit)
		return nil
	}
	old := w.pending[0]
	w.pending = w.pending[1:]
	<-old.done
	w.buf = old.buf
	if old.err != nil {
		return w.fail(old.err)
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

// trim cuts the padding past the logical size.
func (w *writeFile) trim() error {
	if size := w.size(); w.diskEnd > size {
		if err := w.f.Truncate(size); err != nil {
			return w.fail(err)
		}
		w.diskEnd = size
	}
	return nil
}

func (w *writeFile) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// settle puts everything written on disk at its exact size.
func (w *writeFile) settle() error {
	if err := w.drain(); err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	if err := w.flush(); err != nil {
		return err
	}
	return w.trim()
}

func (w *writeFile) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.settle(); err != nil {
		return err
	}
	return w.f.Sync()
}

// SyncData makes what was written durable. A data file is first cut to
// its exact size; a WAL keeps the zero padding of its last block until
// Close: Pebble's WAL reader takes a zeroed chunk at the tail of the
// newest log as its end (the same tail a crash leaves in a preallocated
// log), and cutting the padding at every sync would cost an ftruncate,
// discard the log's preallocated blocks, and make each fdatasync commit a
// size change and a block (re)allocation.
func (w *writeFile) SyncData() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.drain(); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	if !w.through {
		if err := w.trim(); err != nil {
			return err
		}
	}
	if w.dsync {
		return nil // every write was durable when it completed
	}
	return w.f.Datasync()
}

// SyncTo writes out what is buffered below length and promises nothing
// more, as sync_file_range does (see the package doc).
func (w *writeFile) SyncTo(length int64) (fullSync bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return false, w.err
	}
	if length > w.base+int64(w.flushed) {
		return false, w.flush()
	}
	return false, nil
}

// Close cuts the padding. For a WAL that was synced with its padding, the
// cut is synced too: Pebble replays older logs strictly, so a closed log
// must end exactly at its last record even after a crash.
func (w *writeFile) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	padded := w.through && w.diskEnd > w.size()
	serr := w.settle()
	if serr == nil && padded {
		serr = w.f.Datasync()
	}
	cerr := w.f.Close()
	if serr != nil {
		return serr
	}
	return cerr
}

// ReadAt reads what was written, buffered or not.
func (w *writeFile) ReadAt(p []byte, off int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.drain(); err != nil {
		return 0, err
	}
	if err := w.flush(); err != nil {
		return 0, err
	}
	size := w.size()
	if off >= size {
		return 0, io.EOF
	}
	want := len(p)
	if rest := size - off; int64(want) > rest {
		p = p[:rest]
	}
	n, err := w.f.ReadAt(p, off)
	if err == nil && n < want {
		err = io.EOF
	}
	return n, err
}

// Read is not used by Pebble on files it writes; it reads from the start
// like a fresh descriptor would, without a cursor of its own.
func (w *writeFile) Read(p []byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: w.f.Name(), Err: errUnsupported}
}

// WriteAt writes outside the append stream: buffered bytes go first, then
// diskio's File writes p (with read-modify-write if unaligned), and the
// buffer is reloaded where the next Write goes.
func (w *writeFile) WriteAt(p []byte, off int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.settle(); err != nil {
		return 0, err
	}
	pos := w.base + int64(w.n)
	n, err := w.f.WriteAt(p, off)
	end := off + int64(n)
	w.floor = max(w.floor, end, pos)
	w.diskEnd = max(w.diskEnd, end)
	if err != nil {
		return n, w.fail(err)
	}
	if err := w.window(pos); err != nil {
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
	size := w.size()
	w.mu.Unlock()
	return sizedInfo{fileInfo{fi, w.dev}, size}, nil
}
