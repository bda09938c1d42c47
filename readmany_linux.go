//go:build linux

package diskio

import (
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"syscall"

	"github.com/diskio-go/diskio/sched"
)

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
	plain, err := f.acquireOrPlain("read")
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
	if f.access == os.O_WRONLY {
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
	d := f.direct // a direct File reads whole blocks
	for ki, k := range sc.keys {
		r := ranges[k.i]
		s, e := r.Off, r.Off+int64(r.Len)
		if d != nil {
			s, e = d.alignDown(s), d.alignUp(e)
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
		m, err := getMem(f.sched(), max(int(g.end-g.start), 1))
		if err != nil {
			return err // the caller releases what the groups hold
		}
		g.mem = m
	}
	var first error
	if len(sc.groups) == 1 {
		// One read: the scheduler's idle fast path may take it.
		if g := &sc.groups[0]; g.end > g.start {
			g.got, first = f.handle.ReadAt(g.mem.buf[:g.end-g.start], g.start)
		}
	} else {
		if sc.s != f.sched() {
			sc.s, sc.batch = f.sched(), f.sched().Batch()
		}
		sc.calls = sc.calls[:0]
		for i := range sc.groups {
			g := &sc.groups[i]
			if g.end > g.start {
				sc.calls = append(sc.calls, sc.batch.StartFileReadAt(f.handle, g.mem.buf[:g.end-g.start], g.start))
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
