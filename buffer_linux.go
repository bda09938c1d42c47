//go:build linux

package diskio

import (
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

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
		link(m.s).PutBuffer(m.buf)
		m.buf, m.s = nil, nil
		sharedMems.Put(m)
	}
}

// getMem returns memory of at least n bytes from s, holding one reference.
func getMem(s *sched.Scheduler, n int) (*sharedMem, error) {
	b, err := link(s).GetBuffer(n)
	if err != nil {
		return nil, err
	}
	m := sharedMems.Get().(*sharedMem)
	m.buf, m.s = b[:cap(b)], s
	m.refs.Store(1)
	return m, nil
}

// ReadBuffer reads n bytes at off into a pooled aligned buffer and returns
// it without copying (Glommio's read_at): the read covers the aligned blocks
// around [off, off+n) and Bytes is the window into them. Near the end of the
// file Bytes is shorter than n and the error is io.EOF, as with ReadAt.
func (f *File) ReadBuffer(off int64, n int) (*Buffer, error) {
	bufs, err := f.appendReadMany(nil, []Range{{Off: off, Len: n}}, ReadManyOptions{})
	if err != nil {
		return nil, err
	}
	b := bufs[0]
	if len(b.data) < n {
		err = io.EOF
	}
	return b, err
}

// ReadMany reads every range, merging ranges that overlap or lie close
// together into single reads of at most MaxMerge bytes (Glommio's
// read_many), and returns one Buffer per range, in order, without copying:
// merged ranges share memory. The reads reach the scheduler together, in
// one submission, and the caller is woken once when all are done. Near
// the end of the file a Buffer is shorter than its Len. On error no
// Buffers are returned.
func (f *File) ReadMany(ranges []Range, opts ReadManyOptions) ([]*Buffer, error) {
	bufs, err := f.appendReadMany(make([]*Buffer, 0, len(ranges)), ranges, opts)
	if err != nil {
		return nil, err
	}
	return bufs, nil
}

// appendReadMany is ReadMany appending the Buffers to dst.
func (f *File) appendReadMany(dst []*Buffer, ranges []Range, opts ReadManyOptions) ([]*Buffer, error) {
	plain, err := f.enter("read")
	if err != nil {
		return dst, err
	}
	defer f.release()
	if plain {
		bufs, err := plainReadMany(f.osf, ranges)
		return append(dst, bufs...), err
	}
	for _, r := range ranges {
		if r.Off < 0 || r.Len < 0 || r.Off+int64(r.Len) < 0 {
			return dst, negativeRange("read", f.name)
		}
	}
	if len(ranges) == 0 {
		return dst, nil
	}
	if f.acc == os.O_WRONLY {
		return dst, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EBADF}
	}
	sc := manyPool.Get().(*manyScratch)
	defer sc.put()
	sc.plan(f, ranges, opts)
	if err := sc.read(f); err != nil {
		sc.releaseAll()
		return dst, f.pathErr("read", err)
	}
	n := len(dst)
	dst = slices.Grow(dst, len(ranges))[:n+len(ranges)]
	for gi := range sc.groups {
		g := &sc.groups[gi]
		for _, k := range sc.keys[g.first : g.first+g.n] {
			r := ranges[k.i]
			skip := int(r.Off - g.start)
			have := max(min(g.got-skip, r.Len), 0)
			skip = min(skip, len(g.mem.buf))
			dst[n+int(k.i)] = newBuffer(g.mem, g.mem.buf[skip:skip+have])
		}
	}
	sc.releaseAll() // the groups' own references; the Buffers hold theirs
	return dst, nil
}

// manyScratch is ReadMany's working memory, recycled across calls.
type manyScratch struct {
	keys   []rangeKey  // ranges by offset
	groups []manyGroup // one read each
	calls  []sched.Call
	s      *sched.Scheduler
	batch  sched.Batch // of s; kept, as its wait state is made once
}

// rangeKey is a range's offset and its index in the caller's slice.
type rangeKey struct {
	off int64
	i   int32
}

// manyGroup is one read covering keys[first:first+n].
type manyGroup struct {
	start, end int64
	first, n   int32
	mem        *sharedMem // one reference for the group itself
	got        int
}

var manyPool = sync.Pool{New: func() any { return new(manyScratch) }}

func (sc *manyScratch) put() {
	clear(sc.calls)
	sc.groups = sc.groups[:0]
	manyPool.Put(sc)
}

// plan sorts the ranges by offset and groups neighbours: each group is
// read with one request of at most MaxMerge bytes (or one per range with
// NoMerge).
func (sc *manyScratch) plan(f *File, ranges []Range, opts ReadManyOptions) {
	maxMerge, maxGap := int64(opts.MaxMerge), int64(max(opts.MaxGap, 0))
	if maxMerge == 0 {
		maxMerge = 128 << 10
	}
	sc.keys = sc.keys[:0]
	sorted := true
	for i, r := range ranges {
		if i > 0 && r.Off < ranges[i-1].Off {
			sorted = false
		}
		sc.keys = append(sc.keys, rangeKey{off: r.Off, i: int32(i)})
	}
	if !sorted {
		slices.SortFunc(sc.keys, func(a, b rangeKey) int {
			if a.off != b.off {
				return int(min(max(a.off-b.off, -1), 1))
			}
			return int(a.i - b.i)
		})
	}
	sc.groups = sc.groups[:0]
	for ki, k := range sc.keys {
		r := ranges[k.i]
		s, e := r.Off, r.Off+int64(r.Len)
		if f.direct {
			s, e = f.alignDown(s), f.alignUp(e)
			if r.Len == 0 {
				e = s // nothing to read
			}
		}
		if n := len(sc.groups); n > 0 && maxMerge > 0 {
			g := &sc.groups[n-1]
			if s <= g.end+maxGap && max(e, g.end)-g.start <= maxMerge {
				g.end = max(g.end, e)
				g.n++
				continue
			}
		}
		sc.groups = append(sc.groups, manyGroup{start: s, end: e, first: int32(ki), n: 1})
	}
}

// read issues the groups' reads together and waits for all of them.
func (sc *manyScratch) read(f *File) error {
	for i := range sc.groups {
		g := &sc.groups[i]
		m, err := getMem(f.s, max(int(g.end-g.start), 1))
		if err != nil {
			return err // the caller releases what the groups hold
		}
		g.mem = m
	}
	var first error
	if len(sc.groups) == 1 {
		// One read: the scheduler's idle fast path may take it.
		if g := &sc.groups[0]; g.end > g.start {
			g.got, first = f.s.ReadAt(f.fd, g.mem.buf[:g.end-g.start], g.start)
		}
	} else {
		if sc.s != f.s {
			sc.s, sc.batch = f.s, f.s.Batch()
		}
		sc.calls = sc.calls[:0]
		for i := range sc.groups {
			g := &sc.groups[i]
			if g.end > g.start {
				sc.calls = append(sc.calls, sc.batch.StartReadAt(f.fd, g.mem.buf[:g.end-g.start], g.start))
			}
		}
		sc.batch.WaitAll() // one submission, one wake-up
		c := 0
		for i := range sc.groups {
			if g := &sc.groups[i]; g.end > g.start {
				got, err := sc.calls[c].Wait()
				c++
				g.got = got
				if err != nil && first == nil {
					first = err
				}
			}
		}
	}
	return first
}

// releaseAll drops the groups' own references on their memory.
func (sc *manyScratch) releaseAll() {
	for i := range sc.groups {
		if m := sc.groups[i].mem; m != nil {
			m.release()
			sc.groups[i].mem = nil
		}
	}
}
