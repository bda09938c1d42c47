//go:build linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
)

// Buffer is file data read without a copy: an aligned buffer from the
// scheduler's registered memory, and the window of it that holds the bytes
// asked for. Release gives the memory back; Bytes must not be used after.
type Buffer struct {
	f        *File
	mem      *sharedMem
	data     []byte // the requested bytes, inside mem
	released atomic.Bool
}

// sharedMem is an aligned buffer that several Buffers may view (ReadMany
// merges neighbouring ranges into one read); the last Release frees it.
type sharedMem struct {
	buf  []byte
	refs atomic.Int32
}

func (m *sharedMem) release(f *File) {
	if m.refs.Add(-1) == 0 {
		f.putBounce(m.buf)
	}
}

// Bytes returns the data. It is valid until Release.
func (b *Buffer) Bytes() []byte { return b.data }

// Release returns the buffer's memory for reuse. Calling it twice is a
// no-op.
func (b *Buffer) Release() {
	if b.released.Swap(true) {
		return
	}
	b.mem.release(b.f)
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
	m, got, err := f.readSpan(off, off+int64(n))
	skip := int(off - m.start)
	have := max(min(got-skip, n), 0)
	b := &Buffer{f: f, mem: m.mem, data: m.mem.buf[skip : skip+have]}
	m.mem.refs.Add(1)
	m.mem.release(f) // the span's own reference
	if err == nil && have < n {
		err = io.EOF
	}
	if err != nil && err != io.EOF {
		b.Release()
		return nil, f.pathErr("read", err)
	}
	return b, err
}

// span is one aligned read covering one or more requested ranges.
type span struct {
	start int64
	mem   *sharedMem // holds one reference for the span itself
}

// readSpan reads the aligned blocks around [off, end) into a pooled buffer
// and returns it with the number of valid bytes from its start.
func (f *File) readSpan(off, end int64) (span, int, error) {
	start := off
	if f.direct {
		start, end = f.alignDown(off), f.alignUp(end)
	}
	m := &sharedMem{buf: f.getBounce(max(int(end-start), 1))[:end-start]}
	m.refs.Store(1)
	got, err := f.s.ReadAt(f.fd, m.buf, start)
	return span{start: start, mem: m}, got, err
}

// ReadMany reads every range, merging ranges that overlap or lie close
// together into single reads of at most MaxMerge bytes (Glommio's
// read_many), issuing the merged reads concurrently, and returns one Buffer
// per range, in order, without copying: merged ranges share memory. Near
// the end of the file a Buffer is shorter than its Len. On error no Buffers
// are returned.
func (f *File) ReadMany(ranges []Range, opts ReadManyOptions) ([]*Buffer, error) {
	if opts.MaxMerge <= 0 {
		opts.MaxMerge = 128 << 10
	}
	for _, r := range ranges {
		if r.Off < 0 || r.Len < 0 {
			return nil, &fs.PathError{Op: "read", Path: f.name, Err: errors.New("negative offset or length")}
		}
	}
	if err := f.acquire("read"); err != nil {
		return nil, err
	}
	defer f.release()
	if f.acc == os.O_WRONLY {
		return nil, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EBADF}
	}
	order := make([]int, len(ranges))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return ranges[order[a]].Off < ranges[order[b]].Off })

	// Group neighbours: each group is read with one request.
	type group struct {
		start, end int64
		members    []int
		sp         span
		got        int
		err        error
	}
	var groups []*group
	for _, i := range order {
		r := ranges[i]
		s, e := r.Off, r.Off+int64(r.Len)
		if f.direct {
			s, e = f.alignDown(s), f.alignUp(e)
		}
		if n := len(groups); n > 0 {
			g := groups[n-1]
			if s <= g.end+int64(opts.MaxGap) && max(e, g.end)-g.start <= int64(opts.MaxMerge) {
				g.end = max(g.end, e)
				g.members = append(g.members, i)
				continue
			}
		}
		groups = append(groups, &group{start: s, end: e, members: []int{i}})
	}
	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.sp, g.got, g.err = f.readSpan(g.start, g.end)
		}()
	}
	wg.Wait()
	var err error
	for _, g := range groups {
		if g.err != nil && err == nil {
			err = f.pathErr("read", g.err)
		}
	}
	out := make([]*Buffer, len(ranges))
	for _, g := range groups {
		if err == nil {
			for _, i := range g.members {
				r := ranges[i]
				skip := int(r.Off - g.sp.start)
				have := max(min(g.got-skip, r.Len), 0)
				g.sp.mem.refs.Add(1)
				out[i] = &Buffer{f: f, mem: g.sp.mem, data: g.sp.mem.buf[skip : skip+have]}
			}
		}
		g.sp.mem.release(f)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}
