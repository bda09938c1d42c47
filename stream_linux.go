//go:build linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
)

// StreamReader reads a File front to back with an explicit read-ahead: it
// keeps ReadAhead reads of BufferSize bytes in flight, so the device always
// has work queued, instead of the kernel's read-ahead heuristics (which
// O_DIRECT bypasses) or one read at a time. Memory is bounded by
// BufferSize x ReadAhead. A StreamReader is for one goroutine.
type StreamReader struct {
	f       *File
	bufSize int
	slots   []streamSlot
	head    int   // slot the reader consumes next
	next    int64 // offset of the next read to issue
	end     int64 // offset the stream stops at
	cur     []byte
	err     error
	closed  bool
}

type streamSlot struct {
	buf  []byte
	n    int
	err  error
	done chan struct{} // one token per completed read
	busy bool
}

// NewStreamReader starts reading f at off with opts.ReadAhead reads in
// flight. It reads up to the file's size at the time of the call.
func (f *File) NewStreamReader(off int64, opts StreamOptions) (*StreamReader, error) {
	if off < 0 {
		return nil, &fs.PathError{Op: "stream", Path: f.name, Err: errors.New("negative offset")}
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = 512 << 10
	}
	if opts.ReadAhead <= 0 {
		opts.ReadAhead = 8
	}
	if f.direct {
		opts.BufferSize = int(f.alignUp(int64(opts.BufferSize)))
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r := &StreamReader{f: f, bufSize: opts.BufferSize, next: off, end: st.Size()}
	if f.direct && off%f.block != 0 {
		// Start the reads aligned; skip the head in the first buffer.
		r.next = f.alignDown(off)
	}
	skip := int(off - r.next)
	r.slots = make([]streamSlot, opts.ReadAhead)
	for i := range r.slots {
		buf, err := f.s.AllocBuffer(opts.BufferSize)
		if err != nil {
			r.Close()
			return nil, &fs.PathError{Op: "stream", Path: f.name, Err: err}
		}
		r.slots[i] = streamSlot{buf: buf, done: make(chan struct{}, 1)}
	}
	for i := range r.slots {
		r.issue(i)
	}
	if skip > 0 {
		if _, err := io.CopyN(io.Discard, r, int64(skip)); err != nil && err != io.EOF {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// issue starts the read for slot i at the next offset, if any is left.
func (r *StreamReader) issue(i int) {
	if r.next >= r.end {
		return
	}
	s := &r.slots[i]
	off := r.next
	r.next += int64(r.bufSize)
	s.busy = true
	go func() {
		s.n, s.err = r.f.ReadAt(s.buf, off)
		if s.err == io.EOF {
			s.err = nil // a short last buffer
		}
		s.done <- struct{}{}
	}()
}

// Read copies the next bytes of the file into p.
func (r *StreamReader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, &fs.PathError{Op: "read", Path: r.f.name, Err: fs.ErrClosed}
	}
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		s := &r.slots[r.head]
		if !s.busy {
			r.err = io.EOF
			return 0, io.EOF
		}
		<-s.done
		s.busy = false
		if s.err != nil {
			r.err = s.err
			return 0, s.err
		}
		r.cur = s.buf[:s.n]
		if s.n < r.bufSize {
			// End of file (or of the size when the stream began):
			// nothing after this buffer.
			r.next = r.end
		}
		// The slot's buffer is consumed through r.cur; its next read
		// is issued once the reader moves past it (below).
		if len(r.cur) == 0 {
			r.advance()
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	if len(r.cur) == 0 {
		r.advance()
	}
	return n, nil
}

// advance hands the consumed head slot back to the read-ahead.
func (r *StreamReader) advance() {
	i := r.head
	r.head = (r.head + 1) % len(r.slots)
	r.issue(i)
}

// Close waits for the reads in flight and frees the buffers. The File
// stays open.
func (r *StreamReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	for i := range r.slots {
		s := &r.slots[i]
		if s.busy {
			<-s.done
			s.busy = false
		}
		if s.buf != nil {
			r.f.s.FreeBuffer(s.buf)
			s.buf = nil
		}
	}
	return nil
}
