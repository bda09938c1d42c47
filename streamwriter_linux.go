//go:build linux

package diskio

import (
	"io/fs"
	"os"
)

// StreamWriter writes a File front to back with write-behind: full buffers
// are written in the background, up to StreamOptions.ReadAhead of them at
// a time (for a writer, the write-behind), while the caller fills the next
// one. Buffers are aligned to the file's blocks, so on a direct File every
// full buffer is one direct write of whole blocks; the partial last buffer
// is written by Flush, Sync and Close. A StreamWriter is for one
// goroutine; its first error is sticky.
type StreamWriter struct {
	f       *File
	bufSize int
	slots   []writeSlot
	next    int   // slot being filled
	base    int64 // file offset of the filled slot's buffer
	fill    int   // bytes of the buffer holding data (from skip)
	skip    int   // bytes at the buffer's start that are not ours (first buffer only)
	err     error
	closed  bool
}

type writeSlot struct {
	buf  []byte
	err  error
	done chan struct{}
	busy bool
}

// NewStreamWriter starts writing at off; opts.BufferSize and
// opts.ReadAhead (here: buffers written behind) default to 512 KiB and 8.
func (f *File) NewStreamWriter(off int64, opts StreamOptions) (*StreamWriter, error) {
	plain, err := f.acquireOrPlain("stream")
	if err != nil {
		return nil, err
	}
	defer f.release()
	if plain {
		return nil, &fs.PathError{Op: "stream", Path: f.name, Err: errNotRegular}
	}
	if off < 0 {
		return nil, negativeOffset("stream", f.name)
	}
	if f.append {
		return nil, errWriteAtInAppendMode
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = 512 << 10
	}
	if opts.ReadAhead <= 0 {
		opts.ReadAhead = 8
	}
	w := &StreamWriter{f: f, bufSize: opts.BufferSize, base: off}
	if d := f.direct; d != nil {
		w.bufSize = int(d.alignUp(int64(opts.BufferSize)))
		w.base = d.alignDown(off)
	}
	w.skip = int(off - w.base)
	w.fill = w.skip
	w.slots = make([]writeSlot, opts.ReadAhead)
	for i := range w.slots {
		buf, err := f.sched().AllocBuffer(w.bufSize)
		if err != nil {
			w.Close()
			return nil, f.pathErr("stream", err) // the scheduler closed: os.ErrClosed
		}
		w.slots[i] = writeSlot{buf: buf, done: make(chan struct{}, 1)}
	}
	return w, nil
}

// Write copies p into the stream; full buffers go to the file in the
// background.
func (w *StreamWriter) Write(p []byte) (int, error) {
	if w == nil {
		return 0, os.ErrInvalid
	}
	if w.closed {
		return 0, w.closedErr()
	}
	n := 0
	for len(p) > 0 {
		if w.err != nil {
			return n, w.err
		}
		s := &w.slots[w.next]
		if s.busy { // written behind, not done yet: wait for it
			<-s.done
			s.busy = false
			if s.err != nil {
				w.err = s.err
				return n, w.err
			}
		}
		c := copy(s.buf[w.fill:], p)
		w.fill += c
		n += c
		p = p[c:]
		if w.fill == w.bufSize {
			w.issue()
		}
	}
	return n, nil
}

// issue writes the filled slot in the background and moves to the next.
func (w *StreamWriter) issue() {
	s := &w.slots[w.next]
	data, off := s.buf[w.skip:w.fill], w.base+int64(w.skip)
	s.busy = true
	go func() {
		_, s.err = w.f.WriteAt(data, off)
		s.done <- struct{}{}
	}()
	w.base += int64(w.bufSize)
	w.skip, w.fill = 0, 0
	w.next = (w.next + 1) % len(w.slots)
}

// Flush waits for the buffers written behind, then writes the partial
// buffer (the File pads and trims it); later Writes continue after it.
func (w *StreamWriter) Flush() error {
	if w == nil {
		return os.ErrInvalid
	}
	if w.closed {
		return w.closedErr()
	}
	return w.flush()
}

func (w *StreamWriter) closedErr() error {
	return &fs.PathError{Op: "write", Path: w.f.name, Err: fs.ErrClosed}
}

func (w *StreamWriter) flush() error {
	for i := range w.slots {
		s := &w.slots[i]
		if s.busy {
			<-s.done
			s.busy = false
			if s.err != nil && w.err == nil {
				w.err = s.err
			}
		}
	}
	if w.err != nil {
		return w.err
	}
	if w.fill > w.skip {
		s := &w.slots[w.next]
		if _, err := w.f.WriteAt(s.buf[w.skip:w.fill], w.base+int64(w.skip)); err != nil {
			w.err = err
			return err
		}
		// The bytes stay in the buffer: when it fills up, the whole
		// buffer is written again, aligned, over this partial write.
	}
	return nil
}

// Sync flushes, then makes the file durable (File.Sync).
func (w *StreamWriter) Sync() error {
	if err := w.Flush(); err != nil { // os.ErrInvalid for a nil w
		return err
	}
	return w.f.Sync()
}

// Close flushes and frees the buffers. The File stays open; call its Sync
// or Close for durability and the exact size on disk. After Close, Write,
// Flush and Sync fail with os.ErrClosed; Close again returns nil.
func (w *StreamWriter) Close() error {
	if w == nil {
		return os.ErrInvalid
	}
	if w.closed {
		return nil
	}
	err := w.flush()
	w.closed = true
	for i := range w.slots {
		if w.slots[i].buf != nil {
			w.f.sched().FreeBuffer(w.slots[i].buf)
			w.slots[i].buf = nil
		}
	}
	return err
}
