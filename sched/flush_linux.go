//go:build linux

package sched

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// The shared flush. A File's Fsync or Fdatasync is its own system call
// (fsync, fdatasync) while fewer than ownFlushes of them are under way in
// the scheduler, as they run today in the caller slots for blocking work
// (caller_linux.go): a lone sync is made at once, on its caller, at
// fdatasync's cost. A sync that finds ownFlushes under way would queue for
// a slot behind them, each slot one flush of one file; on a filesystem
// whose syncfs(2) is a durable commit of every file (syncfsDurable), it
// joins the filesystem's shared flush instead: one syncfs serves every
// sync of the filesystem that was waiting when it was issued. 64 logs of
// 64 tenants each appending and syncing then pay a few journal commits,
// not 64 queued 4 deep.
//
// Durability is each File's own fsync's: syncfs writes back every dirty
// inode of the filesystem, waits for that writeback, and commits the
// journal with a cache flush (ext4_sync_fs), so what a File's fsync would
// make durable, its data, size and other metadata, is durable when it
// returns, for every File whose sync began before it was issued; a sync
// never joins a syncfs already issued.
//
// Errors are each File's own too, and stricter: a failed syncfs fails the
// flush of every File it served (since Linux 5.8 syncfs reports any
// writeback error of the filesystem, recorded in the superblock, which
// cannot be traced to a file), and each served File then waits for its
// own writeback with sync_file_range(SYNC_FILE_RANGE_WAIT_BEFORE), which
// reports the writeback errors of that File recorded since its
// descriptor last saw them, as its fsync would have (the per-file
// errseq cursor, which syncfs leaves alone). So a File's error is never
// lost to a flush made through another File's descriptor. The sticky
// rule above (package diskio's flushGroup) applies to either failure.
//
// Threads stay as bounded as the syncs they replace: one syncfs in the
// kernel per filesystem at a time, issued in a caller slot for blocking
// work where the scheduler has them (io_uring), so the syncs of callers
// hold at most as many threads as there are slots; callers waiting for a
// shared flush are parked.
type flushes struct {
	own atomic.Int32 // Files' own syncs and durable writes under way (File.sync, File.transfer)

	mu   sync.Mutex
	devs map[uint64]*devFlush // by st_dev

	syncfs atomic.Uint64 // syncfs calls made
	served atomic.Uint64 // syncs they served
}

// devFlush is the shared flush of one filesystem: at most one syncfs in
// the kernel, and the callers gathering for the next one. Files with one
// st_dev are on one mounted filesystem while they are open (the number
// is not reused before the last is closed), so the Files a syncfs serves
// are all on the filesystem it flushes.
type devFlush struct {
	mu      sync.Mutex
	running bool        // a syncfs is in the kernel
	landed  sync.Cond   // running went false (L is &mu)
	next    *flushBatch // gathering callers, not issued yet
}

// flushBatch is one syncfs and the syncs it serves.
type flushBatch struct {
	done chan struct{} // closed once err is set
	err  error
}

// sharedFlushOff marks a File that never joins a shared flush
// (File.shared).
var sharedFlushOff = new(devFlush)

// FlushStats is what the shared flush did: syncfs calls made, and the
// Fsync and Fdatasync calls of Files they served.
type FlushStats struct {
	Syncfs, Served uint64
}

// FlushStats returns the shared flush's counts since the scheduler
// started.
func (s *Scheduler) FlushStats() FlushStats {
	return FlushStats{Syncfs: s.flushes.syncfs.Load(), Served: s.flushes.served.Load()}
}

// ownFlushes is how many Files' own syncs may be under way before more
// join a shared flush: as many as the caller slots for blocking work
// (the worker cap), or the default cap where the scheduler has none.
func (s *Scheduler) ownFlushes() int32 {
	if n := len(s.callerSlots) - maxInline; n > 0 {
		return int32(n)
	}
	return defaultIOWQMaxWorkers
}

// FlushShared reports whether a sync of f made now would be shared with
// other Files' (many syncs and durable writes are under way): a caller
// choosing between a durable write (RWF_DSYNC) and a write followed by a
// sync is then better served by the latter.
func (f *File) FlushShared() bool {
	s := f.s
	return !s.noInline && s.flushes.own.Load() >= s.ownFlushes() && f.devFlush() != nil
}

// sync is Fsync (op OpFsync) or Fdatasync of f: its own system call, or
// a shared flush (see flushes).
func (f *File) sync(op Op) error {
	s := f.s
	if s.noInline || f.shared.Load() == sharedFlushOff {
		return s.doErr(f.request(op))
	}
	if s.flushes.own.Add(1) <= s.ownFlushes() {
		err := s.doErr(f.request(op))
		s.flushes.own.Add(-1)
		return err
	}
	s.flushes.own.Add(-1)
	d := f.devFlush()
	if d == nil {
		return s.doErr(f.request(op))
	}
	return s.sharedSync(f, d, op)
}

// devFlush returns the shared flush of f's filesystem, or nil if f never
// joins one: not a regular file, or a filesystem whose syncfs is not
// known to commit what fsync would (syncfsDurable), or a kernel whose
// syncfs reports no writeback errors (before 5.8). It asks the kernel
// once per File, the first time f's sync could join.
func (f *File) devFlush() *devFlush {
	if d := f.shared.Load(); d != nil {
		if d == sharedFlushOff {
			return nil
		}
		return d
	}
	d := f.s.flushes.of(int(f.fd))
	if d == nil {
		f.shared.Store(sharedFlushOff)
		return nil
	}
	f.shared.Store(d)
	return d
}

// of returns the shared flush of fd's filesystem, made on first use, or
// nil if fd's syncs must stay its own (see File.devFlush).
func (fl *flushes) of(fd int) *devFlush {
	if !syncfsReportsErrors() {
		return nil
	}
	var st unix.Stat_t
	if sys.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	var fs unix.Statfs_t
	if sys.Fstatfs(fd, &fs) != nil || !syncfsDurable(fs.Type) {
		return nil
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	d := fl.devs[st.Dev]
	if d == nil {
		if fl.devs == nil {
			fl.devs = make(map[uint64]*devFlush)
		}
		d = &devFlush{}
		d.landed.L = &d.mu
		fl.devs[st.Dev] = d
	}
	return d
}

// syncfsDurable reports whether syncfs on a filesystem of type magic
// (statfs's f_type) commits, for every file, what its fsync would: ext4
// (and ext2/ext3, one driver) writes back every dirty inode, commits the
// journal and flushes the device cache (ext4_sync_fs; without a journal
// it flushes the cache). Others are left out until measured: btrfs
// commits a whole transaction where fsync writes a log tree, FUSE sends
// nothing unless the server implements FUSE_SYNCFS, and vfat flushes no
// device cache on syncfs.
func syncfsDurable(magic int64) bool {
	return uint32(magic) == unix.EXT4_SUPER_MAGIC
}

// syncfsReportsErrors reports whether the running kernel's syncfs
// returns the filesystem's writeback errors (Linux 5.8, the superblock's
// errseq); before, it returned only errors of its own writeback and
// commit.
var syncfsReportsErrors = sync.OnceValue(func() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	return kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 8)
})

// kernelAtLeast reports whether release (uname's, "6.18.4-foo") is
// major.minor or later.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	mi := parts[1]
	if i := strings.IndexFunc(mi, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		mi = mi[:i]
	}
	min, err := strconv.Atoi(mi)
	if err != nil {
		return false
	}
	return maj > major || maj == major && min >= minor
}

// sharedSync serves f's sync (op) with a syncfs of its filesystem's shared
// flush d: it joins the batch gathering, or leads one, which is issued
// once the syncfs in the kernel (if any) has landed; then it checks f's
// own writeback errors. It is a request as any other in the statistics
// and for a Tracer, run on its caller.
func (s *Scheduler) sharedSync(f *File, d *devFlush, op Op) error {
	if !s.acquire() {
		return ErrClosed
	}
	r := f.request(op)
	if !r.classGiven {
		r.class = Class(f.class.Load())
	}
	start := Now()
	if s.tracer != nil {
		r.tEnqueue = start
	}
	s.stats.onCaller[r.class%NumClasses].Add(1)
	err := s.joinFlush(f, d, r)
	if err == nil {
		err = sys.WaitWriteback(int(f.fd))
	}
	r.err = err
	s.flushes.served.Add(1)
	s.stats.onCaller[r.class%NumClasses].Add(-1)
	s.stats.inline.Add(1)
	s.stats.done(r, start, start, Now())
	_, err = s.finishCall(r, true)
	return err
}

// joinFlush waits for a syncfs of d issued after it was called, leading
// the batch if none is gathering, and returns the syncfs's error.
func (s *Scheduler) joinFlush(f *File, d *devFlush, r *request) error {
	d.mu.Lock()
	if b := d.next; b != nil {
		d.mu.Unlock()
		<-b.done
		return b.err
	}
	b := &flushBatch{done: make(chan struct{})}
	d.next = b
	for d.running {
		d.landed.Wait()
	}
	// From here no caller joins b: those arriving start the next.
	d.next = nil
	d.running = true
	d.mu.Unlock()
	b.err = s.syncfs(f, r)
	d.mu.Lock()
	d.running = false
	d.landed.Signal() // the one leader waiting, if any
	d.mu.Unlock()
	close(b.done)
	return b.err
}

// syncfs makes one syncfs through f's descriptor, in a caller slot for
// blocking work where the scheduler has them (r, the leader's request,
// waits in the slot queue as its own sync would).
func (s *Scheduler) syncfs(f *File, r *request) error {
	if s.workOnCaller {
		p := s.awaitSlot(r)
		defer s.freeSlot(p)
	}
	s.flushes.syncfs.Add(1)
	c := sysCall{kind: callOf(OpFsync, PathFlush, false), fd: f.fd}
	_, err := s.callIgnoringEINTR(&c)
	return err
}
