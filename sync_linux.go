//go:build linux

package diskio

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
	"github.com/diskio-go/diskio/sched"
)

// Durability.
//
// What Sync or Datasync returned nil for is on stable storage: every write
// to the File that completed before the call was made, and the file's
// exact size. Concurrent calls share device flushes (group commit, see
// flushGroup), and so may the calls of many Files of one filesystem: where
// many syncs are under way, one syncfs(2) of an ext4 filesystem serves
// every File's sync waiting for it, each File's own writeback errors
// still its own (sched.File.Fsync). A flush that fails poisons the File: from then on Sync,
// Datasync, Write, WriteAt, WriteAtDSync and Preallocate all return that
// first error, because after a failed fsync Linux may have dropped the
// dirty data and marked it clean, so a later fsync can report success
// with the data gone (PostgreSQL's "fsyncgate", 2018). The only safe
// recovery is to reopen the file and rewrite what was not known durable,
// for example from a log.

// Sync commits the file's contents and its exact size to stable storage
// (fsync). Every write that completed before Sync was called is covered.
// Once a Sync or Datasync of this File has failed, Sync returns that
// first error without flushing again.
func (f *File) Sync() error {
	if p, ok := f.plainPath(); ok {
		return p.Sync()
	}
	if err := f.acquire("sync"); err != nil {
		return err
	}
	defer f.release()
	f.flushCalled(true)
	defer f.dur.flushDone()
	if f.nothingToFlush(true) {
		return f.flush.failed()
	}
	return f.flush.sync(true, f.doFlush)
}

// Datasync commits the file's data and the metadata needed to read it
// back, such as its size (fdatasync); cheaper than Sync when only
// timestamps would differ. Its guarantees and its sticky failure are
// Sync's.
func (f *File) Datasync() error {
	plain, err := f.acquireOrPlain("datasync")
	if err != nil {
		return err
	}
	defer f.release()
	if plain {
		return plainDatasync(f.osf)
	}
	f.flushCalled(false)
	defer f.dur.flushDone()
	if f.nothingToFlush(false) {
		return f.flush.failed()
	}
	return f.flush.sync(false, f.doFlush)
}

// flushCalled notes a Sync (full) or Datasync call for durable writes in
// one trip (durability.called), except that while the scheduler shares
// flushes among many Files (sched.File.FlushShared) the next write stays
// an ordinary one: a durable write would be a flush of this File's alone,
// where the next call can share one.
func (f *File) flushCalled(full bool) {
	f.dur.called(full)
	if f.handle.FlushShared() {
		f.dur.through.Store(0)
	}
}

// doFlush is one device flush for a round of the flush group: fsync or
// fdatasync through the scheduler. Only a failure of the flush itself is
// sticky (flushFailed): an error from before the kernel ran it (the
// scheduler closed) leaves the dirty pages as they were, and a later
// flush may still write them.
func (f *File) doFlush(full bool) (sticky bool, err error) {
	op := "datasync"
	if full {
		op = "sync"
	}
	data, meta := f.dur.snapshot()
	if full {
		err = f.handle.Fsync()
	} else {
		err = f.handle.Fdatasync()
	}
	if err != nil {
		return flushFailed(err), f.pathErr(op, err)
	}
	f.dur.flushed(full, data, meta)
	return false, nil
}

// flushFailed reports whether err, from fsync or fdatasync, says the
// kernel ran the flush and it failed: an errno, other than one that
// refuses the call before any writeback (a bad descriptor, a file that
// cannot be synced). After such a failure the kernel may have dropped the
// dirty pages and marked them clean, so no later flush can be trusted.
func flushFailed(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false // not the kernel's: sched.ErrClosed
	}
	return errno != syscall.EBADF && errno != syscall.EINVAL
}

// flushGroup coalesces concurrent flushes of one file (group commit) and
// keeps the first failure.
//
// A caller that finds no round gathering starts one and leads it: it
// issues the round's flush at once if fewer than maxFlushes are in the
// kernel, else it waits for one to finish, and callers arriving meanwhile
// join its round (next) instead of issuing flushes of their own. A caller
// joins only a round not yet issued, so every caller is released by a
// flush issued after it called, hence after every write it had seen
// complete; fsync and fdatasync cover every write completed before they
// are issued (the kernel waits for that writeback and then flushes the
// device cache). A flush already in flight when a caller arrives cannot
// release it: it was issued before the call, and a write the caller
// completed just before calling may not be covered. With N concurrent
// committers, one flush releases a whole round of them instead of one.
//
// Rounds release their callers in the order they were issued: a round
// whose flush succeeded still waits for the rounds issued before it, and
// takes their failure if one failed. Two fsyncs on one descriptor report
// a writeback error once, to whichever sees it first, so the success of
// the later one proves nothing about data the earlier one failed to
// write; only a success with every earlier flush also successful does.
//
// Sync needs fsync; Datasync is covered by either. A round is an fsync if
// any of its callers asked for one.
//
// A flush with no round in flight or gathering (one committer, the common
// case) uses the group's own round, lone, and allocates nothing: a round's
// done channel is made only when somebody must wait for it (a caller
// joining it, or the round issued after it).
type flushGroup struct {
	mu      sync.Mutex
	flights int         // flushes issued and not finished
	landed  sync.Cond   // a flush finished (L is &mu)
	next    *flushRound // gathering callers, not issued yet
	last    *flushRound // the round issued last, until it is done
	lone    flushRound  // the round of a flush issued with no other round under way
	err     error       // the first failed flush: returned for ever
	// sticky mirrors err for failed, which every write calls: a load,
	// not the group's mutex.
	sticky atomic.Pointer[error]
}

// maxFlushes is how many flushes of one file may be in the kernel at
// once. Two let the next round start while the device finishes the
// previous one (ext4 overlaps their journal and cache-flush work), which
// raises BenchmarkGroupCommit's commit rate over one
// (docs/notes/2026-11-28-design-figures.md).
const maxFlushes = 2

// flushRound is one flush and the callers it releases. Its fields are
// the group's mutex's, but for full, which is final once the round is
// issued and then read only by the round's leader.
type flushRound struct {
	full  bool          // fsync rather than fdatasync
	after chan struct{} // done of the round issued before this one, if any
	done  chan struct{} // closed when err is set; nil until somebody waits
	err   error
}

// waiter returns r's done channel, making it; g.mu is held.
func (r *flushRound) waiter() chan struct{} {
	if r.done == nil {
		r.done = make(chan struct{})
	}
	return r.done
}

// failed returns the sticky error, nil if no flush has failed.
func (g *flushGroup) failed() error {
	if p := g.sticky.Load(); p != nil {
		return *p
	}
	return nil
}

// sync returns once a flush (an fsync if full) issued after this call
// has succeeded, or the sticky error.
func (g *flushGroup) sync(full bool, flush func(full bool) (sticky bool, err error)) error {
	g.mu.Lock()
	if g.err != nil {
		g.mu.Unlock()
		return g.err
	}
	if r := g.next; r != nil {
		// A round is gathering, not yet issued: join it.
		r.full = r.full || full
		done := r.waiter()
		g.mu.Unlock()
		<-done
		return r.err
	}
	if g.last == nil {
		// Nothing under way (so no flush in flight either): issue at
		// once, on the group's own round.
		r := &g.lone
		r.full, r.after, r.done, r.err = full, nil, nil, nil
		g.flights++
		g.last = r
		g.mu.Unlock()
		return g.run(r, flush)
	}
	r := &flushRound{full: full}
	if g.flights >= maxFlushes {
		// Lead a round: gather callers until a flush lands.
		g.next = r
		if g.landed.L == nil {
			g.landed.L = &g.mu
		}
		for g.flights >= maxFlushes {
			g.landed.Wait()
		}
		// From here no caller joins r, and r.full is final.
		g.next = nil
		if g.err != nil {
			r.err = g.err
			done := r.done
			g.mu.Unlock()
			if done != nil {
				close(done)
			}
			return r.err
		}
	}
	g.flights++
	if g.last != nil {
		r.after = g.last.waiter()
	}
	g.last = r
	g.mu.Unlock()
	return g.run(r, flush)
}

// run issues round r's flush and releases its callers, after the rounds
// issued before it.
func (g *flushGroup) run(r *flushRound, flush func(full bool) (sticky bool, err error)) error {
	sticky, err := flush(r.full)
	g.mu.Lock()
	if sticky && g.err == nil {
		g.err = err
		first := err // its own variable: only a failure allocates
		g.sticky.Store(&first)
	}
	g.flights--
	if g.landed.L != nil {
		g.landed.Signal() // the one leader waiting, if any
	}
	after := r.after
	g.mu.Unlock()
	if after != nil {
		<-after
	}
	g.mu.Lock()
	if err == nil {
		err = g.err // an earlier round failed: this success proves nothing
	}
	r.err, r.after = err, nil
	if g.last == r {
		g.last = nil
	}
	done := r.done
	g.mu.Unlock()
	if done != nil {
		close(done)
	}
	return err
}

// WriteAtDSync is WriteAt whose data is durable when it returns: each
// write it issues carries RWF_DSYNC (io_uring's rw_flags, AIO's
// aio_rw_flags, pwritev2), so no separate flush is needed, and other
// writes and flushes proceed meanwhile. It is the per-write form of
// opening the file with O_DSYNC (which OpenFile also honours, for every
// write).
func (f *File) WriteAtDSync(b []byte, off int64) (int, error) {
	plain, err := f.acquireOrPlain("write")
	if err != nil {
		return 0, err
	}
	defer f.release()
	if plain {
		return plainWriteAtDSync(f.osf, b, off)
	}
	// Then WriteAt's checks, in os.File's order.
	if f.append {
		return 0, errWriteAtInAppendMode
	}
	if off < 0 {
		return 0, negativeOffset("writeat", f.name)
	}
	if len(b) == 0 {
		return 0, nil
	}
	if err := f.flush.failed(); err != nil {
		return 0, err
	}
	n, err := f.writeAt(b, off, unix.RWF_DSYNC)
	f.dur.record(unix.RWF_DSYNC)
	f.stampDurable()
	return n, f.pathErrAt("write", off, len(b), err)
}

// Preallocate reserves disk space for [off, off+n) with fallocate, growing
// the file if the range ends past it (the new bytes read as zeros).
// Writes into reserved space allocate no blocks, and cannot fail for lack
// of space; O_DIRECT appends made durable with Datasync into it neither
// allocate nor grow the file, and are faster for it (see
// durable_bench_test.go).
func (f *File) Preallocate(off, n int64) error {
	return f.preallocate("preallocate", 0, off, n)
}

// PreallocateKeepSize reserves disk space for [off, off+n) like
// Preallocate, but leaves the file's size alone (FALLOC_FL_KEEP_SIZE):
// the space past the end is used as appends reach it, and the size, Stat
// and reads are as if nothing happened. Log files preallocate so.
func (f *File) PreallocateKeepSize(off, n int64) error {
	return f.preallocate("preallocate", unix.FALLOC_FL_KEEP_SIZE, off, n)
}

func (f *File) preallocate(op string, mode uint32, off, n int64) error {
	plain, err := f.acquireOrPlain(op)
	if err != nil {
		return err
	}
	defer f.release()
	if plain {
		return plainPreallocate(f.osf, mode, off, n)
	}
	if off < 0 || n <= 0 || off > maxOffset-n {
		return &fs.PathError{Op: op, Path: f.name, Err: syscall.EINVAL}
	}
	if f.access == os.O_RDONLY {
		return &fs.PathError{Op: op, Path: f.name, Err: syscall.EBADF}
	}
	if err := f.flush.failed(); err != nil {
		return err
	}
	err = f.handle.Fallocate(mode, off, n)
	f.dur.changed()
	return f.pathErr(op, err)
}

// SyncDir makes the entries of directory dir durable (fsync of the
// directory): after creating, renaming or removing a file, its directory
// must be synced too, or a crash can forget the name while the file's
// data survives. It goes through the default scheduler.
func SyncDir(dir string) error {
	fd, err := sys.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer sys.Close(fd)
	s, err := sched.Default()
	if err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	if err := s.Fsync(fd); err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}
