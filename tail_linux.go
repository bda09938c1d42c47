//go:build linux

package diskio

import (
	"golang.org/x/sys/unix"
)

// What the write path knows of the file's bytes, so that writing part of a
// block does not read the block back first (the read-on-write that made a
// WAL on diskio slower than on os.File, and that MariaDB's O_DIRECT redo
// log regressed on, MDEV-33894):
//
//   - the last partial blocks this File wrote, kept in memory (the head
//     block of the next append of each append stream);
//   - a range known to be zeros, [zeroFrom, zeroTo). It starts as all
//     past the size the file had at open (so a file this File created or
//     truncated is all known), follows Truncate down, and shrinks under
//     this File's writes (an append moves zeroFrom up); a Preallocate that
//     grows the file adds zeros inside it. A hole or unwritten extent the
//     kernel reports (SEEK_DATA) becomes the range when the old one does
//     not help.
//
// Other descriptors may change the file at any moment. Before the write
// path trusts what it knows, it compares the file's change time and size
// with the ones it recorded after its own last change: a write, truncate
// or fallocate through any descriptor sets a new ctime (Linux 6.13+
// multigrain timestamps give a ctime that was looked at a finer one at the
// next change, so even changes within one clock tick are seen). A
// mismatch forgets everything but the kernel's size. What is not known
// is asked of the kernel with SEEK_DATA (a hole or an unwritten extent
// reads as zeros) before it is read.
type known struct {
	zeroFrom int64
	zeroTo   int64
	stamp    fileStamp
	seq      uint64 // counts this File's changes begun and ended (f.mu)
	inflight int    // this File's changes begun and not ended
	blocks   [knownBlocks]knownBlock
	next     int        // the entry put replaces next
	window   knownBlock // bytes read ahead below the size (a recycled file's old data)
}

// knownWindow is how much is read at once when a partial block's other
// bytes are unknown: a file whose old data lies past every append (a
// recycled log) costs one read per window instead of one per append.
const knownWindow = 256 << 10

// knownBlocks is how many partial blocks are kept: one per append stream
// for a few concurrent streams (a WAL and its neighbours).
const knownBlocks = 4

type knownBlock struct {
	at  int64  // file offset; -1: empty
	buf []byte // the block's bytes, zeros past the size at the time
}

type fileStamp struct {
	ok           bool
	ctime, mtime unix.Timespec
	size         int64
}

func stampOf(st *unix.Stat_t) fileStamp {
	return fileStamp{ok: true, ctime: st.Ctim, mtime: st.Mtim, size: st.Size}
}

func (k *known) init(st unix.Stat_t) {
	k.zeroFrom, k.zeroTo = st.Size, maxOffset
	k.stamp = stampOf(&st)
	for i := range k.blocks {
		k.blocks[i].at = -1
	}
	k.window.at = -1
}

// check compares the file as it is now (st, from an fstat begun when seq
// was k.seq) with what this File recorded, and forgets what may be stale
// (f.mu held). Past st.Size all is zeros, unless a change of this File
// was under way meanwhile: its bytes may have landed after the fstat.
func (k *known) check(st *unix.Stat_t, seq uint64) {
	if k.stamp.ok && k.stamp == stampOf(st) {
		return
	}
	k.zeroFrom, k.zeroTo = maxOffset, maxOffset
	if k.seq == seq && k.inflight == 0 {
		k.zeroFrom = st.Size
	}
	k.forget(0, maxOffset)
	k.stamp = fileStamp{}
}

// alone reports whether the change seq is the only one of this File since
// it began: then what the kernel said during it holds for the other pages.
func (k *known) alone(seq uint64) bool { return k.seq == seq && k.inflight == 1 }

// begin counts a change of ours in; the result goes to end.
func (k *known) begin() uint64 {
	k.seq++
	k.inflight++
	return k.seq
}

// end records the file's state after a change of ours (st, nil if fstat
// failed): trusted only if no other change of ours began or ended while it
// was under way, since the kernel may have seen theirs half done.
func (k *known) end(seq uint64, st *unix.Stat_t) {
	if st != nil && k.alone(seq) {
		k.stamp = stampOf(st)
	} else {
		k.stamp = fileStamp{}
	}
	k.seq++
	k.inflight--
}

// get returns the n bytes kept at at, or nil.
func (k *known) get(at int64, n int) []byte {
	for i := range k.blocks {
		if k.blocks[i].at == at && len(k.blocks[i].buf) == n {
			return k.blocks[i].buf
		}
	}
	if w := &k.window; w.at >= 0 && at >= w.at && at+int64(n) <= w.at+int64(len(w.buf)) {
		return w.buf[at-w.at : at-w.at+int64(n)]
	}
	return nil
}

// zero reports whether [at, end) is known to be zeros.
func (k *known) zero(at, end int64) bool { return at >= k.zeroFrom && end <= k.zeroTo }

// wrote brings what is kept up to date with p, just written at off.
func (k *known) wrote(off int64, p []byte) {
	if end := off + int64(len(p)); off <= k.zeroFrom && end > k.zeroFrom {
		k.zeroFrom = min(end, k.zeroTo)
	} else if off > k.zeroFrom && off < k.zeroTo {
		k.zeroTo = off
	}
	upd := func(e *knownBlock) {
		if e.at < 0 {
			return
		}
		lo, hi := max(off, e.at), min(off+int64(len(p)), e.at+int64(len(e.buf)))
		if lo < hi {
			copy(e.buf[lo-e.at:hi-e.at], p[lo-off:hi-off])
		}
	}
	for i := range k.blocks {
		upd(&k.blocks[i])
	}
	upd(&k.window)
}

// overwritten records that [off, end) was written with bytes the File
// does not see (copy_file_range): like wrote, without keeping them.
func (k *known) overwritten(off, end int64) {
	if off <= k.zeroFrom && end > k.zeroFrom {
		k.zeroFrom = min(end, k.zeroTo)
	} else if off > k.zeroFrom && off < k.zeroTo {
		k.zeroTo = off
	}
	k.forget(off, end)
}

// put keeps a copy of the block b at at.
func (k *known) put(at int64, b []byte) {
	e := &k.blocks[k.next]
	for i := range k.blocks {
		if k.blocks[i].at == at {
			e = &k.blocks[i]
			break
		}
	}
	if e == &k.blocks[k.next] {
		k.next = (k.next + 1) % len(k.blocks)
	}
	if cap(e.buf) < len(b) {
		e.buf = make([]byte, len(b))
	}
	e.at, e.buf = at, e.buf[:len(b)]
	copy(e.buf, b)
}

// forget drops the kept blocks that overlap [start, end).
func (k *known) forget(start, end int64) {
	for _, e := range k.all() {
		if e.at >= 0 && e.at < end && start < e.at+int64(len(e.buf)) {
			e.at = -1
		}
	}
}

func (k *known) all() [knownBlocks + 1]*knownBlock {
	var out [knownBlocks + 1]*knownBlock
	for i := range k.blocks {
		out[i] = &k.blocks[i]
	}
	out[knownBlocks] = &k.window
	return out
}

// truncated records a new size set by this File (f.mu held).
func (k *known) truncated(size int64) {
	switch {
	case size <= k.zeroFrom:
		k.zeroFrom, k.zeroTo = size, maxOffset
	case size <= k.zeroTo:
		k.zeroTo = maxOffset
	}
	k.forget(size, maxOffset) // blocks holding bytes past size
}

// knownBlock fills blk (one block at at) with the file's bytes without a
// read, if it can: zeros at or past ksize (the kernel's size) or zeroFrom,
// a kept block, or a hole or unwritten extent by SEEK_DATA. It reports
// whether it did. The caller holds the block's range lock, in its change
// seq.
func (f *File) knownBlock(blk []byte, at, ksize int64, seq uint64) bool {
	f.mu.Lock()
	if at >= ksize || f.known.zero(at, at+int64(len(blk))) {
		f.mu.Unlock()
		clear(blk)
		return true
	}
	if b := f.known.get(at, len(blk)); b != nil {
		copy(blk, b)
		f.mu.Unlock()
		// Bytes past the size read as zeros: a kept block already holds
		// zeros there, and the size cannot have shrunk unseen.
		return true
	}
	f.mu.Unlock()
	// The kernel knows holes and unwritten extents (fallocated, or a
	// recycled file's punched range): no data in the block is zeros.
	data, err := unix.Seek(f.fd, at, unix.SEEK_DATA)
	if err == unix.ENXIO {
		data = maxOffset
	} else if err != nil || data < at+int64(len(blk)) {
		return false
	}
	f.mu.Lock()
	if f.known.alone(seq) {
		// Other pages too: no write of this File was under way.
		f.known.zeroFrom, f.known.zeroTo = at, data
	}
	f.mu.Unlock()
	clear(blk)
	return true
}

// readKnown fills blk (the block at at, below ksize) from the disk, and
// reads ahead: up to knownWindow bytes from at are kept, if no other change
// of this File (seq is the caller's) was under way meanwhile.
func (f *File) readKnown(blk []byte, at, ksize int64, seq uint64) error {
	n := min(int64(knownWindow), f.alignUp(ksize)-at)
	buf := f.getBounce(int(max(n, int64(len(blk)))))
	defer f.putBounce(buf)
	got, err := f.s.ReadAt(f.fd, buf, at)
	if err != nil {
		return err
	}
	got = int(min(int64(got), ksize-at))
	clear(buf[got:])
	copy(blk, buf)
	f.mu.Lock()
	if f.known.alone(seq) {
		w := &f.known.window
		if cap(w.buf) < len(buf) {
			w.buf = make([]byte, len(buf))
		}
		w.at, w.buf = at, w.buf[:len(buf)]
		copy(w.buf, buf)
	}
	f.mu.Unlock()
	return nil
}
