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
//   - zeroFrom: every byte at or past it is zero. It starts at the size
//     the file had at open (so a file this File created or truncated is
//     all known), follows Truncate down, and moves up with this File's
//     writes; a Preallocate that grows the file adds zeros past it.
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
	stamp    fileStamp
	seq      uint64 // counts this File's changes begun and ended (f.mu)
	blocks   [knownBlocks]knownBlock
	next     int // the entry put replaces next
}

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
	k.zeroFrom = st.Size
	k.stamp = stampOf(&st)
	for i := range k.blocks {
		k.blocks[i].at = -1
	}
}

// check compares the file as it is now (st) with what this File recorded,
// and forgets what may be stale (f.mu held).
func (k *known) check(st *unix.Stat_t) {
	if k.stamp.ok && k.stamp == stampOf(st) {
		return
	}
	k.zeroFrom = st.Size
	k.forget(0, maxOffset)
	k.stamp = fileStamp{}
}

// begin counts a change of ours in; the result goes to end.
func (k *known) begin() uint64 {
	k.seq++
	return k.seq
}

// end records the file's state after a change of ours (st, nil if fstat
// failed): trusted only if no other change of ours began or ended while it
// was under way, since the kernel may have seen theirs half done.
func (k *known) end(seq uint64, st *unix.Stat_t) {
	if st != nil && k.seq == seq {
		k.stamp = stampOf(st)
	} else {
		k.stamp = fileStamp{}
	}
	k.seq++
}

// get returns the kept block at at, or nil.
func (k *known) get(at int64) []byte {
	for i := range k.blocks {
		if k.blocks[i].at == at {
			return k.blocks[i].buf
		}
	}
	return nil
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
	for i := range k.blocks {
		e := &k.blocks[i]
		if e.at >= 0 && e.at < end && start < e.at+int64(len(e.buf)) {
			e.at = -1
		}
	}
}

// truncated records a new size set by this File (f.mu held).
func (k *known) truncated(size int64) {
	k.zeroFrom = min(k.zeroFrom, size)
	for i := range k.blocks {
		e := &k.blocks[i]
		if e.at >= 0 && e.at+int64(len(e.buf)) > size {
			e.at = -1
		}
	}
}

// knownBlock fills blk (one block at at) with the file's bytes without a
// read, if it can: zeros at or past ksize (the kernel's size) or zeroFrom,
// a kept block, or a hole or unwritten extent by SEEK_DATA. It reports
// whether it did. The caller holds the block's range lock.
func (f *File) knownBlock(blk []byte, at, ksize int64) bool {
	f.mu.Lock()
	if at >= ksize || at >= f.known.zeroFrom {
		f.mu.Unlock()
		clear(blk)
		return true
	}
	if b := f.known.get(at); b != nil {
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
	if err == unix.ENXIO || err == nil && data >= at+int64(len(blk)) {
		clear(blk)
		return true
	}
	return false
}
