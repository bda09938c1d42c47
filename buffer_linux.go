//go:build linux

package diskio

import (
	"sync"
	"sync/atomic"

	"github.com/diskio-go/diskio/sched"
)

// Buffer is file data read without a copy: an aligned buffer from the
// scheduler's registered memory, and the window of it that holds the bytes
// asked for. Release gives the memory back and recycles the Buffer.
//
// The memory is the scheduler's, and a Buffer keeps it: Bytes stays valid
// until Release even if the File, or the scheduler, is closed first (a
// closed scheduler frees the memory when the last Buffer holding it is
// released, and unmaps its registered arena once all of it is back).
type Buffer struct {
	hold *bufferHold // nil for a Buffer of a plain (non-regular) file
	data []byte      // the requested bytes, inside the held memory
}

// bufferHold is what a Buffer holds: its reference on shared memory. It is
// the Buffer's one allocation-free handle for the runtime cleanup that
// returns the memory of a Buffer dropped without Release
// (buffer_cleanup_linux.go): the cleanup is attached once per Buffer
// object, and finds the hold empty when the Buffer was released.
type bufferHold struct {
	mem atomic.Pointer[sharedMem]
}

// Buffers are recycled with their memory: ReadMany in steady state
// allocates neither (no heap object, no mmap) per range.
var bufferPool = sync.Pool{New: func() any { return newPooledBuffer() }}

// newBuffer returns a Buffer viewing data inside m, taking one reference
// on m. It is the one place Buffers are made.
func newBuffer(m *sharedMem, data []byte) *Buffer {
	b := bufferPool.Get().(*Buffer)
	m.refs.Add(1)
	b.data = data
	b.hold.mem.Store(m)
	return b
}

// Bytes returns the data. It is valid until Release, and only while the
// Buffer itself is reachable: the memory is not the garbage collector's,
// and a dropped Buffer's is reused once the collector finds it.
// A nil Buffer has no bytes.
func (b *Buffer) Bytes() []byte {
	if b == nil {
		return nil
	}
	return b.data
}

// Release returns the buffer's memory for reuse. A second Release of the
// same Buffer right after is a no-op, but after Release the Buffer belongs
// to the pool again: neither it nor Bytes may be used. A Buffer dropped
// without Release has its memory returned when the garbage collector finds
// it, and counted (DroppedBuffers): later than Release would, so Release
// what you read. Release of a nil Buffer does nothing.
func (b *Buffer) Release() {
	if b == nil || b.hold == nil {
		return
	}
	b.release()
}

// release is the one place a Buffer's memory goes back: it drops the
// Buffer's reference on its memory (the last one recycles the memory) and
// recycles the Buffer.
func (b *Buffer) release() {
	m := b.hold.mem.Swap(nil)
	if m == nil {
		return // released already
	}
	b.data = nil
	m.release()
	bufferPool.Put(b)
}

// sharedMem is an aligned buffer from the scheduler (registered memory
// where io_uring allows) that several Buffers may view (ReadMany merges
// neighbouring ranges into one read). The last reference gives it back to
// its scheduler's buffer cache (sched.Scheduler.PutBuffer), not to the
// kernel: no munmap per read. The memory is the scheduler's, and outlives
// its Close until given back (sched.Scheduler.Close).
type sharedMem struct {
	buf  []byte // the whole block, of a power-of-two size class
	refs atomic.Int32
	s    *sched.Scheduler
}

// sharedMems recycles sharedMem objects: a read in steady state
// allocates none.
var sharedMems = sync.Pool{New: func() any { return new(sharedMem) }}

func (m *sharedMem) release() {
	if m.refs.Add(-1) == 0 {
		m.s.PutBuffer(m.buf)
		m.buf, m.s = nil, nil
		sharedMems.Put(m)
	}
}

// getMem returns memory of at least n bytes from s, holding one reference.
func getMem(s *sched.Scheduler, n int) (*sharedMem, error) {
	b, err := s.GetBuffer(n)
	if err != nil {
		return nil, err
	}
	m := sharedMems.Get().(*sharedMem)
	m.buf, m.s = b[:cap(b)], s
	m.refs.Store(1)
	return m, nil
}
