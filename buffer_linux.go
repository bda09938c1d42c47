//go:build linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"
)

// Buffer is file data read without a copy: an aligned buffer from the
// scheduler's registered memory, and the window of it that holds the bytes
// asked for. Release gives the memory back; Bytes must not be used after.
type Buffer struct {
	f        *File
	mem      []byte // the whole aligned buffer, as allocated
	data     []byte // the requested bytes, inside mem
	released atomic.Bool
}

// Bytes returns the data. It is valid until Release.
func (b *Buffer) Bytes() []byte { return b.data }

// Release returns the buffer's memory for reuse. Calling it twice is a
// no-op.
func (b *Buffer) Release() {
	if b.released.Swap(true) {
		return
	}
	b.f.putBounce(b.mem)
	b.mem, b.data = nil, nil
}

// ReadBuffer reads n bytes at off into a pooled aligned buffer and returns
// it without copying (Glommio's read_at): the read covers the aligned blocks
// around [off, off+n) and Bytes is the window into them. Near the end of the
// file Bytes is shorter than n and the error is io.EOF, as with ReadAt.
func (f *File) ReadBuffer(off int64, n int) (*Buffer, error) {
	if off < 0 || n < 0 {
		return nil, &fs.PathError{Op: "read", Path: f.name, Err: errors.New("negative offset or length")}
	}
	if err := f.acquire("read"); err != nil {
		return nil, err
	}
	defer f.release()
	if f.acc == os.O_WRONLY {
		return nil, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EBADF}
	}
	start, end := off, off+int64(n)
	if f.direct {
		start, end = f.alignDown(off), f.alignUp(end)
	}
	mem := f.getBounce(max(int(end-start), 1))[:end-start]
	f.mu.Lock()
	size, padded := f.size, f.disk != f.size
	f.mu.Unlock()
	got, err := f.s.ReadAt(f.fd, mem, start)
	if padded {
		got = int(min(int64(got), max(size-start, 0)))
	}
	skip := int(off - start)
	have := max(min(got-skip, n), 0)
	b := &Buffer{f: f, mem: mem, data: mem[skip : skip+have]}
	if err == nil && have < n {
		err = io.EOF
	}
	if err != nil && err != io.EOF {
		b.Release()
		return nil, f.pathErr("read", err)
	}
	return b, err
}
