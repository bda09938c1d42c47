//go:build linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/diskio-go/diskio/sched"
)

// StreamReader reads a File front to back with an explicit read-ahead: it
// keeps ReadAhead reads of BufferSize bytes in flight, so the device always
// has work queued, instead of the kernel's read-ahead heuristics (which
// O_DIRECT bypasses) or one read at a time. Memory is bounded by
// BufferSize x (ReadAhead+1): the reads in flight, and the buffer the
// reader is consuming (so that consuming it does not leave the device one
// read short), plus the Buffers from NextBuffer not yet released.
//
// With a read-ahead of 1 the stream reads one buffer at a time, when the
// reader needs it, as a plain ReadAt would: on an idle scheduler such a
// read takes the idle fast path (one system call on the caller's thread),
// where a read kept in flight through the scheduler's loop costs two
// thread wake-ups (4 KiB reads: 0.6x of fio --iodepth=1 through the loop).
// A StreamReader is for one goroutine.
type StreamReader struct {
	mu      sync.Mutex // held by Read and Close, and by the File's Close ending the stream
	f       *File
	bufSize int
	slots   []streamSlot
	head    int         // slot the reader consumes next
	freed   int         // consumed slots behind head whose next read is not issued yet
	batch   sched.Batch // reads issued together reach the kernel together
	batchN  int         // issue freed slots' reads this many at a time
	next    int64       // offset of the next read to issue
	end     int64       // offset the stream stops at
	pool    *memPool
	oneDeep bool // ReadAhead 1: read each buffer when needed (see above)
	cur     []byte
	err     error
	closed  bool
}

type streamSlot struct {
	mem  *sharedMem // nil after NextBuffer handed it out, until reissued
	off  int64
	call sched.Call // the read in flight, while busy
	err  error      // the read could not start
	busy bool
}

// NewStreamReader starts reading f at off with opts.ReadAhead reads in
// flight. It reads up to the file's size at the time of the call.
func (f *File) NewStreamReader(off int64, opts StreamOptions) (*StreamReader, error) {
	if p, plain, err := f.plainCheck(); err != nil || plain {
		if err != nil {
			return nil, err
		}
		return nil, &fs.PathError{Op: "stream", Path: p.Name(), Err: errNotRegular}
	}
	if off < 0 {
		return nil, &fs.PathError{Op: "stream", Path: f.name, Err: errors.New("negative offset")}
	}
	if f.acc == os.O_WRONLY {
		return nil, &fs.PathError{Op: "stream", Path: f.name, Err: syscall.EBADF}
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
	r := &StreamReader{f: f, bufSize: opts.BufferSize, next: off, end: st.Size(), batchN: streamBatch(opts),
		batch: f.s.Batch(), pool: poolFor(f.s), oneDeep: opts.ReadAhead == 1}
	// Locked until its reads are issued: a Close of the File meanwhile
	// ends the stream only once it is whole.
	r.mu.Lock()
	f.streams.add(r)
	if f.direct && off%f.block != 0 {
		// Start the reads aligned; skip the head in the first buffer.
		r.next = f.alignDown(off)
	}
	skip := int(off - r.next)
	slots := opts.ReadAhead + 1
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
	r.next += int64(r.bufSize)
	s.busy = true
	if s.err = r.f.acquire("read"); s.err != nil {
		return
	}
	if s.mem == nil {
		s.mem = r.pool.get(r.bufSize)
	}
	if r.oneDeep {
		return // read in wait, when the reader needs it
	}
	s.call = r.batch.StartReadAt(r.f.fd, s.buf(r.bufSize), s.off)
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
		n, err = r.f.s.ReadAt(r.f.fd, s.buf(r.bufSize), s.off)
	} else {
		n, err = s.call.Wait()
	}
	r.f.release()
	if err != nil {
		return 0, r.f.pathErr("read", err)
	}
	return int(min(int64(n), r.end-s.off)), nil
}

// Read copies the next bytes of the file into p. Once the StreamReader or
// its File is closed it fails with fs.ErrClosed.
func (r *StreamReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, &fs.PathError{Op: "read", Path: r.f.name, Err: fs.ErrClosed}
	}
	if err := r.fill(); err != nil {
		return 0, err
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	if len(r.cur) == 0 {
		r.advance()
	}
	return n, nil
}

// NextBuffer returns the next bytes of the file without copying them: the
// rest of the buffer the stream holds, usually one whole BufferSize read
// (Glommio's get_buffer_aligned). The caller owns the Buffer and must
// Release it; the stream reads on into other memory meanwhile. At the end
// it returns nil, io.EOF.
func (r *StreamReader) NextBuffer() (*Buffer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, &fs.PathError{Op: "read", Path: r.f.name, Err: fs.ErrClosed}
	}
	if err := r.fill(); err != nil {
		return nil, err
	}
	s := &r.slots[r.head]
	b := newBuffer(s.mem, r.cur)
	s.mem.release() // the Buffer holds the memory now; the slot takes new
	s.mem, r.cur = nil, nil
	r.advance()
	return b, nil
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
		if r.freed > 0 && !s.call.Ready() {
			r.flush() // about to wait: let the device have every free slot
		}
		n, err := r.wait(s)
		if err != nil {
			r.err = err
			return err
		}
		r.cur = s.buf(n)
		if n < r.bufSize {
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

// advance hands the consumed head slot back to the read-ahead. Its read
// is issued with others (flush): reads started together reach the kernel
// in one submission, where one at a time would each cost a wake-up of the
// scheduler.
func (r *StreamReader) advance() {
	r.head = (r.head + 1) % len(r.slots)
	r.freed++
	if r.freed >= r.batchN {
		r.flush()
	}
}

// streamBatch is how many freed slots wait to be issued together: small
// buffers are worth batching (one submission, fewer wake-ups of the
// scheduler, and the block layer merges neighbours), while a large buffer
// idle for even a moment costs the device more than its submission costs.
func streamBatch(o StreamOptions) int {
	return max(1, min(o.ReadAhead/4, (64<<10)/o.BufferSize))
}

// flush issues the reads of the freed slots, in file order.
func (r *StreamReader) flush() {
	for ; r.freed > 0; r.freed-- {
		r.issue((r.head - r.freed + len(r.slots)) % len(r.slots))
	}
	r.batch.Submit()
}

// Close waits for the reads in flight and frees the buffers. The File
// stays open. Closing the File closes its StreamReaders too.
func (r *StreamReader) Close() error {
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
			s.mem = nil
		}
	}
	return nil
}
