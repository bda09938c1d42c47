//go:build linux

package diskio

import (
	"io"
	"io/fs"
	"math/bits"
	"os"
	"sync"
	"syscall"

	"github.com/diskio-go/diskio/sched"
)

// StreamReader reads a File front to back with an explicit read-ahead: it
// keeps ReadAhead reads of BufferSize bytes in flight, so the device always
// has work queued, instead of the kernel's read-ahead heuristics (which
// O_DIRECT bypasses) or one read at a time. Memory is bounded by
// BufferSize x ReadAhead rounded up to whole reads (below), plus one read:
// the reads in flight, and the one the reader is consuming (so that
// consuming it does not leave the device short), plus the Buffers from
// NextBuffer not yet released. With one buffer per read that is
// BufferSize x (ReadAhead+1).
//
// Small buffers with a deep read-ahead are read several at a time: the
// stream knows its reads are sequential, so where it would issue
// neighbouring BufferSize reads together (which the block layer merges
// into one request to the device anyway), it issues one read of up to
// 64 KiB (streamGroup) and hands out its BufferSize pieces. A 4 KiB x 50
// stream thus makes one read, one completion and at most one wake-up of
// the reader per 16 buffers, not per buffer: four 64 KiB reads in flight
// (64 buffers: ReadAhead rounded up to whole reads) while the reader
// consumes a fifth, 320 KiB in all where one read per buffer holds
// 204 KiB. Nothing else changes for the caller: NextBuffer still returns
// one BufferSize piece at a time, each released on its own (the read's
// memory is reused once all its pieces are released), and Read copies.
//
// With a read-ahead of 1 the stream reads one buffer at a time, when the
// reader needs it, as a plain ReadAt would: on an idle scheduler such a
// read takes the idle fast path (one system call on the caller's thread),
// where a read kept in flight through the scheduler's loop costs two
// thread wake-ups.
// A StreamReader is for one goroutine.
type StreamReader struct {
	mu       sync.Mutex // held by Read and Close, and by the File's Close ending the stream
	f        *File
	bufSize  int // the caller's BufferSize: what NextBuffer hands out
	readSize int // bytes per read: bufSize x streamGroup
	slots    []streamSlot
	head     int         // slot the reader consumes next
	batch    sched.Batch // the first reads reach the kernel together
	next     int64       // offset of the next read to issue
	end      int64       // offset the stream stops at
	oneDeep  bool        // ReadAhead 1: read each buffer when needed (see above)
	cur      []byte
	curOff   int // offset of cur[0] in the head slot's read
	err      error
	closed   bool
}

type streamSlot struct {
	mem  *sharedMem // nil after NextBuffer lent it out, until reissued
	lent bool       // NextBuffer handed out a piece of mem
	off  int64
	call sched.Call // the read in flight, while busy
	err  error      // the read could not start
	busy bool
}

// NewStreamReader starts reading f at off with opts.ReadAhead reads in
// flight. It reads up to the file's size at the time of the call.
func (f *File) NewStreamReader(off int64, opts StreamOptions) (*StreamReader, error) {
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
	if f.access == os.O_WRONLY {
		return nil, &fs.PathError{Op: "stream", Path: f.name, Err: syscall.EBADF}
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = 512 << 10
	}
	if opts.ReadAhead <= 0 {
		opts.ReadAhead = 8
	}
	start := off // where the reads start
	if d := f.direct; d != nil {
		// Aligned reads; the head of the first buffer is skipped.
		opts.BufferSize = int(d.alignUp(int64(opts.BufferSize)))
		start = d.alignDown(off)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	group := streamGroup(opts)
	r := &StreamReader{f: f, bufSize: opts.BufferSize, readSize: opts.BufferSize * group, next: start, end: st.Size(),
		batch: f.sched().Batch(), oneDeep: opts.ReadAhead == 1}
	// Locked until its reads are issued: a Close of the File meanwhile
	// ends the stream only once it is whole.
	r.mu.Lock()
	f.streams.add(r)
	skip := int(off - start)
	// ReadAhead buffers in flight (rounded up to whole reads) while the
	// reader consumes one more read.
	slots := (opts.ReadAhead+group-1)/group + 1
	if r.oneDeep {
		slots = 1
	}
	r.slots = make([]streamSlot, slots)
	for i := range r.slots {
		r.issue(i)
	}
	r.batch.Submit()
	r.mu.Unlock()
	if skip > 0 {
		if _, err := io.CopyN(io.Discard, r, int64(skip)); err != nil && err != io.EOF {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// issue starts the read for slot i at the next offset, if any is left. The
// reads go to the scheduler without a goroutine each: started together,
// they are submitted together. Each holds a reference on the File until
// it is waited for, so Close of the File waits for it.
func (r *StreamReader) issue(i int) {
	if r.next >= r.end {
		return
	}
	s := &r.slots[i]
	s.off = r.next
	r.next += int64(r.readSize)
	s.busy = true
	if s.err = r.f.acquire("read"); s.err != nil {
		return
	}
	if s.mem == nil {
		if s.mem, s.err = getMem(r.f.sched(), r.readSize); s.err != nil {
			r.f.release()
			s.err = r.f.pathErr("read", s.err) // the scheduler closed: os.ErrClosed
			return
		}
	}
	if r.oneDeep {
		return // read in wait, when the reader needs it
	}
	s.call = r.batch.StartFileReadAt(r.f.handle, s.buf(r.readSize), s.off)
}

func (s *streamSlot) buf(n int) []byte { return s.mem.buf[:n] }

// wait waits for slot s's read and returns the bytes it holds, up to the
// end the stream stops at (the size when it began: what is written after
// is not the stream's).
func (r *StreamReader) wait(s *streamSlot) (int, error) {
	s.busy = false
	if s.err != nil {
		return 0, s.err
	}
	var n int
	var err error
	if r.oneDeep {
		n, err = r.f.handle.ReadAt(s.buf(r.readSize), s.off)
	} else {
		n, err = s.call.Wait()
	}
	r.f.release()
	if err != nil {
		return 0, r.f.pathErrAt("read", s.off, r.readSize, err)
	}
	return int(min(int64(n), r.end-s.off)), nil
}

// Read copies the next bytes of the file into p. Once the StreamReader or
// its File is closed it fails with fs.ErrClosed.
func (r *StreamReader) Read(p []byte) (int, error) {
	if r == nil {
		return 0, os.ErrInvalid
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, &fs.PathError{Op: "read", Path: r.f.name, Err: fs.ErrClosed}
	}
	if err := r.fill(); err != nil {
		return 0, err
	}
	n := copy(p, r.cur)
	r.consume(n)
	return n, nil
}

// NextBuffer returns the next bytes of the file without copying them: the
// rest of the current BufferSize piece of the stream, usually all of it
// (Glommio's get_buffer_aligned; less after a partial Read, at an
// unaligned start, and at the end of the file). The caller owns the Buffer
// and must Release it; the stream reads on into other memory meanwhile.
// At the end it returns nil, io.EOF.
func (r *StreamReader) NextBuffer() (*Buffer, error) {
	if r == nil {
		return nil, os.ErrInvalid
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, &fs.PathError{Op: "read", Path: r.f.name, Err: fs.ErrClosed}
	}
	if err := r.fill(); err != nil {
		return nil, err
	}
	s := &r.slots[r.head]
	n := min(len(r.cur), r.bufSize-r.curOff%r.bufSize)
	b := newBuffer(s.mem, r.cur[:n:n])
	s.lent = true // the slot's next read takes new memory
	r.consume(n)
	return b, nil
}

// consume moves past n bytes of r.cur, and past the head slot once its
// bytes are all consumed.
func (r *StreamReader) consume(n int) {
	r.cur = r.cur[n:]
	r.curOff += n
	if len(r.cur) == 0 {
		r.advance()
	}
}

// fill makes r.cur hold unread bytes, waiting for the head slot's read.
func (r *StreamReader) fill() error {
	for len(r.cur) == 0 {
		if r.err != nil {
			return r.err
		}
		s := &r.slots[r.head]
		if !s.busy {
			r.err = io.EOF
			return io.EOF
		}
		n, err := r.wait(s)
		if err != nil {
			r.err = err
			return err
		}
		r.cur, r.curOff = s.buf(n), 0
		if n < r.readSize {
			// End of file (or of the size when the stream began):
			// nothing after this buffer.
			r.next = r.end
		}
		// The slot's buffer is consumed through r.cur; its next read
		// is issued once the reader moves past it.
		if len(r.cur) == 0 {
			r.advance()
		}
	}
	return nil
}

// advance hands the consumed head slot back to the read-ahead and issues
// its next read. Memory it lent to NextBuffer's Buffers stays theirs (the
// last Release returns it to the pool); the read goes into new memory.
func (r *StreamReader) advance() {
	i := r.head
	if s := &r.slots[i]; s.lent {
		s.mem.release()
		s.mem, s.lent = nil, false
	}
	r.head = (i + 1) % len(r.slots)
	r.issue(i)
	r.batch.Submit()
}

// streamGroup is how many BufferSize pieces one read covers: small buffers
// are read several at a time, up to 64 KiB, as their separate reads issued
// together would be merged by the block layer anyway (a 4 KiB x 50 window
// submitted at once reached the device as requests of 135-170 KiB), and
// one read costs the scheduler, the kernel and the reader a sixteenth of
// what 16 do. It is a power of two (the pool's size classes) no larger
// than a third of the read-ahead, so at least three reads stay in flight
// while the reader consumes another; large buffers are read one at a
// time (docs/notes/2026-11-28-design-figures.md has 16 against 8).
func streamGroup(o StreamOptions) int {
	n := min(o.ReadAhead/3, maxGroupRead/o.BufferSize)
	if n <= 1 {
		return 1
	}
	return 1 << (bits.Len(uint(n)) - 1)
}

// maxGroupRead is the most a StreamReader reads at once for small buffers.
const maxGroupRead = 64 << 10

// Close waits for the reads in flight and frees the buffers. The File
// stays open. Closing the File closes its StreamReaders too.
func (r *StreamReader) Close() error {
	if r == nil {
		return os.ErrInvalid
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f.streams.remove(r)
	return r.closeLocked()
}

func (r *StreamReader) closeLocked() error {
	if r.closed {
		return nil
	}
	r.closed = true
	for i := range r.slots {
		s := &r.slots[i]
		if s.busy {
			r.wait(s)
		}
		if s.mem != nil {
			s.mem.release()
			s.mem, s.lent = nil, false
		}
	}
	return nil
}
