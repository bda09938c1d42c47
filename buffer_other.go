//go:build !linux

package diskio

import (
	"bufio"
	"io"
	"io/fs"
	"os"
)

// On systems other than Linux the fast paths keep their API and semantics
// on plain os.File calls: no direct I/O, no registered memory, no read-ahead
// beyond the kernel's.

// Buffer is file data returned by ReadBuffer and ReadMany.
type Buffer struct{ data []byte }

// Bytes returns the data. It is valid until Release. A nil Buffer has
// no bytes.
func (b *Buffer) Bytes() []byte {
	if b == nil {
		return nil
	}
	return b.data
}

// Release gives the buffer back (a no-op here, and for a nil Buffer).
func (b *Buffer) Release() {
	if b != nil {
		b.data = nil
	}
}

// ReadBuffer reads n bytes at off into a new buffer; near the end of the
// file Bytes is shorter than n and the error is io.EOF.
func (f *File) ReadBuffer(off int64, n int) (*Buffer, error) {
	if off < 0 || n < 0 {
		return nil, negativeRange("read", f.Name())
	}
	buf := make([]byte, n)
	m, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return &Buffer{data: buf[:m]}, err
}

// ReadMany reads every range, one ReadAt each.
func (f *File) ReadMany(ranges []Range, opts ReadManyOptions) ([]*Buffer, error) {
	return f.appendReadMany(nil, ranges, opts)
}

// appendReadMany is ReadMany appending the Buffers to dst.
func (f *File) appendReadMany(dst []*Buffer, ranges []Range, opts ReadManyOptions) ([]*Buffer, error) {
	n := len(dst)
	for _, r := range ranges {
		b, err := f.ReadBuffer(r.Off, r.Len)
		if err != nil && err != io.EOF {
			return dst[:n], err
		}
		dst = append(dst, b)
	}
	return dst, nil
}

// StreamReader reads a File front to back through a buffer of BufferSize.
type StreamReader struct {
	r      *bufio.Reader
	closed bool
	name   string
}

// NewStreamReader starts reading f at off.
func (f *File) NewStreamReader(off int64, opts StreamOptions) (*StreamReader, error) {
	if off < 0 {
		return nil, negativeOffset("stream", f.Name())
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = 512 << 10
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	sr := io.NewSectionReader(f, off, max(st.Size()-off, 0))
	return &StreamReader{r: bufio.NewReaderSize(sr, opts.BufferSize), name: f.Name()}, nil
}

// Read copies the next bytes of the file into p.
func (r *StreamReader) Read(p []byte) (int, error) {
	if r == nil {
		return 0, os.ErrInvalid
	}
	if r.closed {
		return 0, &fs.PathError{Op: "read", Path: r.name, Err: fs.ErrClosed}
	}
	return r.r.Read(p)
}

// NextBuffer returns the next bytes of the file in a Buffer of their own
// (a copy here); at the end it returns nil, io.EOF.
func (r *StreamReader) NextBuffer() (*Buffer, error) {
	if r == nil {
		return nil, os.ErrInvalid
	}
	if r.closed {
		return nil, &fs.PathError{Op: "read", Path: r.name, Err: fs.ErrClosed}
	}
	if _, err := r.r.Peek(1); err != nil {
		return nil, err
	}
	p, _ := r.r.Peek(r.r.Buffered())
	b := &Buffer{data: append([]byte(nil), p...)}
	r.r.Discard(len(p))
	return b, nil
}

// Close ends the stream; the File stays open.
func (r *StreamReader) Close() error {
	if r == nil {
		return os.ErrInvalid
	}
	r.closed = true
	return nil
}

// StreamWriter writes a File front to back through a buffer of BufferSize.
type StreamWriter struct {
	f      *File
	w      *bufio.Writer
	closed bool
}

// NewStreamWriter starts writing at off.
func (f *File) NewStreamWriter(off int64, opts StreamOptions) (*StreamWriter, error) {
	if off < 0 {
		return nil, negativeOffset("stream", f.Name())
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = 512 << 10
	}
	return &StreamWriter{f: f, w: bufio.NewWriterSize(io.NewOffsetWriter(f, off), opts.BufferSize)}, nil
}

// Write copies p into the stream.
func (w *StreamWriter) Write(p []byte) (int, error) {
	if w == nil {
		return 0, os.ErrInvalid
	}
	if w.closed {
		return 0, w.closedErr()
	}
	return w.w.Write(p)
}

func (w *StreamWriter) closedErr() error {
	return &fs.PathError{Op: "write", Path: w.f.Name(), Err: fs.ErrClosed}
}

// Flush writes what is buffered.
func (w *StreamWriter) Flush() error {
	if w == nil {
		return os.ErrInvalid
	}
	if w.closed {
		return w.closedErr()
	}
	return w.w.Flush()
}

// Sync flushes, then syncs the file.
func (w *StreamWriter) Sync() error {
	if err := w.Flush(); err != nil {
		return err
	}
	return w.f.Sync()
}

// Close flushes; the File stays open. After Close, Write, Flush and Sync
// fail with os.ErrClosed; Close again returns nil.
func (w *StreamWriter) Close() error {
	if w == nil {
		return os.ErrInvalid
	}
	if w.closed {
		return nil
	}
	w.closed = true
	return w.w.Flush()
}
