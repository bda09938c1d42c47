//go:build linux

package sched

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// File is one open file as its Scheduler knows it: the descriptor its
// requests go to, and everything the scheduler keeps for that file — its
// class, its name in slow-request reports, its slot in io_uring's
// registered file table, whether the page cache served its last read and
// whether its classified writes come back from the ring. Nothing is kept
// by descriptor number, so a number the kernel reuses for another file
// starts with nothing.
//
// Open makes a File from a descriptor the caller keeps open; Close ends
// it, and must come before the descriptor is closed, once no request on
// the File is in progress (package diskio's File counts its calls for
// that, as internal/poll's FD does). Its methods are safe for concurrent
// use.
type File struct {
	s        *Scheduler
	fd       int32
	name     string
	inMemory bool // the filesystem keeps the file's data in memory (tmpfs): nothing to wait for
	// direct: the descriptor is open with O_DIRECT. Read on Linux AIO
	// only, which waits asynchronously for nothing else (route).
	direct bool
	// rawReads: inMemory, and its pages cannot be swapped out (ramfs,
	// or tmpfs with no swap when the File was opened), so a read is a
	// copy that never sleeps: small ones are raw system calls
	// (copyInMemory).
	rawReads bool

	class atomic.Uint32
	// blocked counts the classified writes made on their callers since
	// one sent to the ring with RWF_NOWAIT came back (0: send the next
	// one to the ring). See nowaitProbe.
	blocked atomic.Uint32
	// missed: the last ReadAtNowait found nothing cached (EAGAIN), so
	// the next one is likely a miss too and is made as an ordinary
	// system call (see rawNowaitMax).
	missed atomic.Bool
	// shared is the shared flush of the File's filesystem once a sync
	// has looked it up, sharedFlushOff if it has none (flush_linux.go).
	shared atomic.Pointer[devFlush]

	// slot is the loop's: the File's index in io_uring's registered
	// file table, or -1. registered says Register was asked.
	slot       int32
	registered atomic.Bool
	closed     atomic.Bool
}

// Open returns the File for the open descriptor fd, named name in
// slow-request reports (SlowIO.Name). It fails with ErrClosed once the
// scheduler is closed, and with EBADF for a negative fd.
func (s *Scheduler) Open(fd int, name string) (*File, error) {
	if fd < 0 || fd > 1<<31-1 {
		return nil, unix.EBADF
	}
	if s.state.Load()&stateClosed != 0 {
		return nil, ErrClosed
	}
	f := &File{s: s, fd: int32(fd), name: name, slot: -1}
	f.inMemory, f.rawReads = inMemory(fd)
	if s.backend == AIO {
		f.direct = isDirect(fd)
	}
	return f, nil
}

// OpenPath is Open for a descriptor the caller has just opened at path
// (os.OpenFile's name), which names the File too. Where path is absolute
// and a File opened earlier in the same directory was found on a
// filesystem that keeps no data in memory (not tmpfs or ramfs), the new
// File is taken to be on it too, and opening it asks the kernel nothing
// (Open asks fstatfs). A directory that becomes a mount point of tmpfs
// later keeps that answer for its new files: they are then served as
// files on a disk are, correctly but without the in-memory shortcuts.
func (s *Scheduler) OpenPath(fd int, path string) (*File, error) {
	dir, ok := dirOf(path)
	if !ok || !s.onDisk.has(dir) {
		f, err := s.Open(fd, path)
		if err == nil && ok && !f.inMemory {
			s.onDisk.add(dir)
		}
		return f, err
	}
	if fd < 0 || fd > 1<<31-1 {
		return nil, unix.EBADF
	}
	if s.state.Load()&stateClosed != 0 {
		return nil, ErrClosed
	}
	f := &File{s: s, fd: int32(fd), name: path, slot: -1}
	if s.backend == AIO {
		f.direct = isDirect(fd)
	}
	return f, nil
}

// dirOf returns the directory of an absolute path ("/a/b" for
// "/a/b/c"), or false.
func dirOf(path string) (string, bool) {
	if len(path) == 0 || path[0] != '/' {
		return "", false
	}
	i := strings.LastIndexByte(path, '/')
	return path[:i+1], true
}

// diskDirs remembers a few directories whose files are on a filesystem
// that keeps no data in memory (OpenPath), in a small table indexed by a
// hash of the name: a directory pushed out by another of the same hash
// is asked again.
type diskDirs struct {
	dirs [16]atomic.Pointer[string]
}

func diskDirSlot(dir string) int {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(dir); i++ {
		h = (h ^ uint32(dir[i])) * 16777619
	}
	return int(h % 16)
}

func (d *diskDirs) has(dir string) bool {
	p := d.dirs[diskDirSlot(dir)].Load()
	return p != nil && *p == dir
}

func (d *diskDirs) add(dir string) {
	d.dirs[diskDirSlot(dir)].Store(&dir)
}

// inMemory reports whether fd's filesystem keeps file data in memory
// (tmpfs, ramfs): a read or write there is a copy that waits for no
// device, made on the caller as os.File makes it. rawReads says whether
// a read can also never sleep: ramfs never swaps, tmpfs can only where
// the system has swap (a swapped-out page is read back in by the reader).
func inMemory(fd int) (inMemory, rawReads bool) {
	var st unix.Statfs_t
	if sys.Fstatfs(fd, &st) != nil {
		return false, false
	}
	switch uint32(st.Type) {
	case unix.RAMFS_MAGIC:
		return true, true
	case unix.TMPFS_MAGIC:
		var si unix.Sysinfo_t
		return true, sys.Sysinfo(&si) == nil && si.Totalswap == 0
	}
	return false, false
}

// Fd returns the File's descriptor.
func (f *File) Fd() int { return int(f.fd) }

// Name returns the name Open gave the File.
func (f *File) Name() string { return f.name }

// Scheduler returns the scheduler the File belongs to.
func (f *File) Scheduler() *Scheduler { return f.s }

// SetClass makes c the class of the File's requests from now on, except
// those given one per call (ReadAtClass, Batch.SetClass). It fails for a
// class it does not know.
func (f *File) SetClass(c Class) error {
	if c >= NumClasses {
		return errBadClass(c)
	}
	f.class.Store(uint32(c))
	f.blocked.Store(0)
	return nil
}

// Class returns the File's class (Unclassified until SetClass).
func (f *File) Class() Class { return Class(f.class.Load()) }

// Register adds the File to io_uring's registered file table, so that its
// requests skip the kernel's per-request file lookup. Requests work
// whether or not it succeeds; it fails where the scheduler has no table
// (see Scheduler.Fixed) or the table is full. Registering twice is one
// registration.
func (f *File) Register() error {
	if !f.s.fixed.Files {
		return errors.New("sched: no registered files: " + f.s.fixed.FilesReason)
	}
	if f.registered.Swap(true) {
		return nil
	}
	_, err := f.s.control(f.request(opRegisterFile))
	if err != nil {
		f.registered.Store(false)
	}
	return err
}

// Registered reports whether Register has put the File in the registered
// file table (or is doing so).
func (f *File) Registered() bool { return f.registered.Load() }

// Close ends the File: it leaves the registered file table, which holds
// its own reference to the open file, so the descriptor can then be
// closed. No request on the File may be in progress or start after it.
// Closing twice is an error.
func (f *File) Close() error {
	if f.closed.Swap(true) {
		return errFileClosed
	}
	if !f.registered.Load() {
		return nil
	}
	_, err := f.s.control(f.request(opUnregisterFile))
	if err == ErrClosed {
		err = nil // the ring and its table are gone with the scheduler
	}
	return err
}

var errFileClosed = errors.New("sched: File already closed")

// request returns a pooled request for op on f.
func (f *File) request(op Op) *request { return newRequest(op, f, f.fd) }

// ReadAt reads len(p) bytes at off, resubmitting short reads until p is
// full or the file ends (then n < len(p) and err is nil). p must stay
// untouched until ReadAt returns; on an O_DIRECT descriptor it must be
// aligned. A File whose data lives in memory (tmpfs) is read on the
// caller, as os.File reads it: there is nothing to wait for.
func (f *File) ReadAt(p []byte, off int64) (int, error) { return f.transfer(OpRead, p, off, 0) }

// transfer reads or writes p at off with rwf (a write's flags): a File
// in memory copies on the caller first (copyInMemory), the scheduler's
// do makes the rest.
func (f *File) transfer(op Op, p []byte, off int64, rwf uint32) (int, error) {
	done := 0
	if rwf == 0 && f.inMemory {
		var err error
		if done, err = f.copyInMemory(op, p, off); err == nil {
			return done, nil
		}
	}
	r := f.request(op)
	r.buf, r.off, r.rwf, r.done = p, off, rwf, done
	if rwf&(unix.RWF_DSYNC|unix.RWF_SYNC) != 0 {
		// A durable write is a flush of its own (see flushes).
		f.s.flushes.own.Add(1)
		defer f.s.flushes.own.Add(-1)
	}
	return f.s.do(r)
}

// copyInMemory reads or writes p at off on a File whose data lives in
// memory, as a page-cache hit is served: on the caller, with no request
// and outside the statistics, its system calls through the scheduler's
// calls (PathCaller; the attempts counted from 0), and for a Tracer an
// inline request. It stops at the end of the file (a read) and at the
// first error, which it leaves for the scheduler's path to make again
// (a request, whose attempts count from 0 again) and report, from done.
func (f *File) copyInMemory(op Op, p []byte, off int64) (done int, err error) {
	s := f.s
	if s.state.Load()&stateClosed != 0 {
		return 0, ErrClosed
	}
	var start int64
	if s.tracer != nil {
		start = Now()
	}
	// A small read that cannot sleep (rawReads) is a raw system call,
	// as a page-cache hit is: the runtime need not prepare to hand the
	// P to another thread for a copy of a few µs.
	c := sysCall{kind: callOf(op, PathCaller, op == OpRead && f.rawReads && len(p) <= rawNowaitMax), fd: f.fd}
	for done < len(p) {
		c.buf, c.off = p[done:], off+int64(done)
		n, err := s.call(c)
		c.retried()
		if err != nil || n == 0 {
			if op == OpRead && err == nil {
				break // end of file
			}
			return done, errInMemory
		}
		done += n
	}
	if s.tracer != nil {
		s.traceInline(RequestEvent{Op: op, Fd: f.fd, Off: off, Len: len(p), Submits: c.retry(), N: done}, start)
	}
	return done, nil
}

var errInMemory = errors.New("sched: in-memory copy stopped")

// WriteAt writes all of p at off, resubmitting short writes.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	return f.WriteAtFlags(p, off, 0)
}

// WriteAtFlags is WriteAt with RWF_* flags for this one write (pwritev2's
// flags; io_uring's rw_flags; AIO's aio_rw_flags): unix.RWF_DSYNC makes
// the write durable when it completes, as if the file were opened with
// O_DSYNC, without a separate fdatasync; unix.RWF_SYNC adds the metadata,
// as O_SYNC; unix.RWF_APPEND writes at the end of the file (off is then
// ignored). A resubmitted short write keeps the flags.
func (f *File) WriteAtFlags(p []byte, off int64, rwf uint32) (int, error) {
	return f.transfer(OpWrite, p, off, rwf)
}

// Fsync flushes the file's data and metadata to stable storage: when it
// returns nil, what fsync(2) on the descriptor would have made durable
// is. It is the descriptor's fsync, or, where many syncs are under way, a
// syncfs(2) of the file's filesystem shared with other Files' syncs
// (flush_linux.go), with the file's own writeback errors reported as
// fsync reports them.
func (f *File) Fsync() error { return f.sync(OpFsync) }

// Fdatasync flushes the file's data, and the metadata needed to read it
// back; shared as Fsync is.
func (f *File) Fdatasync() error { return f.sync(OpFdatasync) }

// Fallocate is fallocate(2) through the scheduler.
func (f *File) Fallocate(mode uint32, off, length int64) error {
	return f.s.fallocate(f, f.fd, mode, off, length)
}

// fileName returns the name of r's file for reports, "" for a request made by
// descriptor number.
func (r *request) fileName() string {
	if r.file == nil {
		return ""
	}
	return r.file.name
}

// skipRing reports whether a classified write to f should go to its
// caller without trying the ring first (see nowaitProbe).
func (f *File) skipRing() bool {
	return f != nil && f.blocked.Load() != 0 && f.blocked.Add(1)%nowaitProbe != 0
}

// triedRing records whether a classified write to f sent to the ring with
// RWF_NOWAIT came back (blocked) or was made there.
func (f *File) triedRing(blocked bool) {
	switch {
	case f == nil:
	case blocked:
		f.blocked.Store(1)
	case f.blocked.Load() != 0:
		f.blocked.Store(0)
	}
}

type errBadClass Class

func (e errBadClass) Error() string {
	return "sched: unknown class " + strconv.Itoa(int(e))
}
