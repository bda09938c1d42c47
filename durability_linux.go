//go:build linux

package diskio

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Durable writes in one trip.
//
// A log that calls Sync or Datasync after every write pays two trips to
// the kernel per record: the write, then the flush (which io_uring runs on
// a worker thread). When a File sees that pattern (at most one write
// between two flush calls), it issues the next write with RWF_DSYNC (after
// a Datasync) or RWF_SYNC (after a Sync): the kernel makes it durable as
// part of the write, as O_DSYNC would; for an overwrite of written blocks
// an O_DIRECT RWF_DSYNC write is a single FUA write (ext4 since 5.6), no
// cache flush. The Sync or Datasync that follows then finds nothing of
// this File's left to flush and returns at once, unless the file's size or
// allocation changed since this File's last durable write (another
// descriptor appended, truncated or allocated), or the File has not
// flushed since it was opened. If a
// second write comes before the flush, it is an ordinary write and the
// flush is issued as usual (group commit).
type durability struct {
	// dirtyData counts changes a fdatasync must cover, dirtyMeta those
	// an fsync must (every change: timestamps); both count at
	// completion. cleanData and cleanMeta are the counts the last
	// successful flushes were issued after.
	dirtyData, dirtyMeta atomic.Uint64
	cleanData, cleanMeta atomic.Uint64
	writes               atomic.Int32  // writes since the last flush call
	through              atomic.Uint32 // RWF_SYNC or RWF_DSYNC for the next write, or 0
	busy                 atomic.Int32  // writes and flush calls under way

	// stamp is the file's state after the File's last durable write
	// (nothingToFlush), under stampMu.
	stampMu sync.Mutex
	stamp   fileStamp
}

// setStamp records st as the file's state after a durable write.
func (d *durability) setStamp(st fileStamp) {
	d.stampMu.Lock()
	d.stamp = st
	d.stampMu.Unlock()
}

// stampIs reports whether st is the state the last durable write left.
func (d *durability) stampIs(st fileStamp) bool {
	d.stampMu.Lock()
	defer d.stampMu.Unlock()
	return st.ok && d.stamp == st
}

func (d *durability) init() {
	// Until its first flush, a File does not know what earlier writers
	// left unflushed.
	d.dirtyData.Store(1)
	d.dirtyMeta.Store(1)
}

// take returns the RWF flags the next ordinary write should carry; the
// write calls done when it ends.
func (d *durability) take() uint32 {
	d.busy.Add(1)
	d.writes.Add(1)
	return d.through.Swap(0)
}

// done records a write taken with take that completed (or failed) with
// flags rwf.
func (d *durability) done(rwf uint32) {
	d.busy.Add(-1)
	d.record(rwf)
}

// record counts a change that completed (or failed) with flags rwf.
func (d *durability) record(rwf uint32) {
	if rwf&(unix.RWF_DSYNC|unix.RWF_SYNC) == 0 {
		d.dirtyData.Add(1)
	}
	if rwf&unix.RWF_SYNC == 0 {
		d.dirtyMeta.Add(1)
	}
}

// changed records a change of the size or the allocation.
func (d *durability) changed() { d.record(0) }

// called notes a flush call (ended with flushDone): at most one write
// since the last one, and nothing else under way (one writer, not a group
// committing together: there a durable write would commit alone), makes
// the next write a durable one.
func (d *durability) called(full bool) {
	alone := d.busy.Add(1) == 1
	if n := d.writes.Swap(0); n > 1 || !alone {
		d.through.Store(0)
	} else if full {
		d.through.Store(unix.RWF_SYNC)
	} else if d.through.Load() != unix.RWF_SYNC {
		d.through.Store(unix.RWF_DSYNC)
	}
}

func (d *durability) flushDone() { d.busy.Add(-1) }

// clean reports whether every change this File completed is covered by a
// flush, or was durable when it completed.
func (d *durability) clean(full bool) bool {
	if full && d.dirtyMeta.Load() != d.cleanMeta.Load() {
		return false
	}
	return d.dirtyData.Load() == d.cleanData.Load()
}

// snapshot is taken before a flush is issued; flushed records it after
// the flush succeeded.
func (d *durability) snapshot() (data, meta uint64) {
	return d.dirtyData.Load(), d.dirtyMeta.Load()
}

func (d *durability) flushed(full bool, data, meta uint64) {
	storeMax(&d.cleanData, data)
	if full {
		storeMax(&d.cleanMeta, meta)
	}
}

func storeMax(v *atomic.Uint64, x uint64) {
	for {
		old := v.Load()
		if old >= x || v.CompareAndSwap(old, x) {
			return
		}
	}
}

// fileStamp is what the kernel says of a file without a timestamp query
// (statOf): its size and allocated blocks.
type fileStamp struct {
	ok           bool
	size, blocks int64
}

// stampDurable records the file's stamp after a durable write of this
// File's, for nothingToFlush.
func (f *File) stampDurable() {
	st, _ := statOf(f.dataFd) // on failure !ok: the next flush is not skipped
	f.dur.setStamp(st)
}

// nothingToFlush reports whether a Sync (full) or Datasync may return
// without a flush: this File's changes are all durable, and the file's
// size and allocation are what they were after its last durable write.
// Another descriptor's write that changed neither (an overwrite of
// allocated bytes) is not detected: such a write is flushed by that
// descriptor's own Sync, not by this File's.
func (f *File) nothingToFlush(full bool) bool {
	if !f.dur.clean(full) {
		return false
	}
	st, _ := statOf(f.dataFd)
	return f.dur.stampIs(st)
}
