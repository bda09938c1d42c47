//go:build linux

package sched

import (
	"io"
	"syscall"

	"github.com/diskio-go/diskio/internal/sys"

	"golang.org/x/sys/unix"
)

// Page-cache attempts: preadv2/pwritev2 with RWF_NOWAIT, made on the
// caller's goroutine. They never reach the loop or the kernel queue; the
// kernel either copies from (or into) the page cache at once, or refuses
// with EAGAIN without blocking, so the calling thread is never parked on
// the disk and the runtime starts no thread for it. A caller sends
// whatever such an attempt leaves undone through ReadAt or WriteAt.

// ReadAtNowait makes one preadv2(p, off, RWF_NOWAIT) on the caller's
// goroutine: it copies what the page cache holds of [off, off+len(p)) and
// never waits for the disk. n may be short (only part of the range is
// cached, or the file ends; the kernel may also stop early, see preadv2(2)
// BUGS), n == 0 with a nil error is end of file, and EAGAIN means nothing
// was cached. An error for which NowaitRefused reports true means
// RWF_NOWAIT cannot be used on the file at all: use ReadAt. EINTR is
// retried. The error is a bare syscall.Errno.
//
// Its system call goes through the scheduler's calls (syscall_linux.go):
// with Options.Faults, the injector sees each attempt (Path
// PathPageCache, Flags RWF_NOWAIT), the raw ones included: Errno fails
// it without a system call, Short shortens it. With a Tracer, it reports
// a SysPreadv2 call and, unless the attempt found nothing (EAGAIN) or was
// refused, an inline request with Nowait set; so a trace counts each read
// once, as a page-cache hit or as the request that went on through the
// ring (a partial hit: both).
//
// While the File's attempts hit (Missed is false), one of up to
// rawNowaitMax bytes is made as a raw system call, which the runtime
// never hands off to another thread; after a miss, which submits the
// kernel's read-ahead from the calling thread and can sleep there, they
// are ordinary ones until the next hit. The route is the same with and
// without an injector or a Tracer.
func (f *File) ReadAtNowait(p []byte, off int64) (int, error) {
	s := f.s
	if len(p) == 0 {
		return 0, nil
	}
	if s.state.Load()&stateClosed != 0 {
		return 0, ErrClosed
	}
	var start int64
	if s.tracer != nil {
		start = Now()
	}
	missed := f.missed.Load()
	raw := !missed && len(p) <= rawNowaitMax
	var c sysCall
	var n int
	var err error
	if _, ok := s.calls.(*kernelCaller); ok && raw {
		// A hit as kernelCaller makes it, without its frame: what
		// runs around the preadv2 is most of what diskio adds to a
		// hit (BenchmarkPageCacheHit in the root package). With a
		// decorator there is no kernelCaller here, and c is made.
		n, err = sys.RawPreadv2(int(f.fd), p, off, unix.RWF_NOWAIT)
	} else {
		c = sysCall{kind: callOf(OpRead, PathPageCache, raw), fd: f.fd, flags: unix.RWF_NOWAIT, off: off, buf: p}
		n, err = s.callIgnoringEINTR(&c)
	}
	if miss := err == unix.EAGAIN; miss != missed {
		f.missed.Store(miss) // only on a change: many readers share the line
	}
	if s.tracer != nil {
		s.traceNowait(c, start, n, err)
	}
	return n, err
}

// Missed reports whether the File's last ReadAtNowait found nothing
// cached (EAGAIN): the next read is likely a miss too.
func (f *File) Missed() bool { return f.missed.Load() }

// WriteAtNowait makes one pwritev2(p, off, rwf|RWF_NOWAIT) on the
// caller's goroutine: it writes into the page cache what it can without
// waiting (a page to read in, a lock, a journal start) and refuses the
// rest with EAGAIN or a short count; see ReadAtNowait for the errors.
// ext4, for one, refuses buffered RWF_NOWAIT writes with EOPNOTSUPP. Once
// a File of the scheduler has been refused, the others are too, without
// a system call: they would all be on the same kind of filesystem more
// often than not, and each refusal costs a failed call.
func (f *File) WriteAtNowait(p []byte, off int64, rwf uint32) (int, error) {
	s := f.s
	if e := s.nowaitWriteRefusal.Load(); e != 0 {
		return 0, syscall.Errno(e)
	}
	if len(p) == 0 {
		return 0, nil
	}
	start, err := s.beginNowait()
	if err != nil {
		return 0, err
	}
	c := sysCall{kind: callOf(OpWrite, PathPageCache, false), fd: f.fd, flags: rwf | unix.RWF_NOWAIT, off: off, buf: p}
	n, err := s.callIgnoringEINTR(&c)
	if errno, ok := err.(syscall.Errno); ok && NowaitRefused(errno) {
		s.nowaitWriteRefusal.Store(uint32(errno))
	}
	if s.tracer != nil {
		s.traceNowait(c, start, n, err)
	}
	return n, err
}

// NowaitWritesRefused returns the error with which the kernel refused a
// pwritev2(RWF_NOWAIT) of one of the scheduler's Files, which
// WriteAtNowait now returns at once, or nil.
func (f *File) NowaitWritesRefused() error {
	if e := f.s.nowaitWriteRefusal.Load(); e != 0 {
		return syscall.Errno(e)
	}
	return nil
}

// NowaitRefused reports whether err from ReadAtNowait or WriteAtNowait
// means RWF_NOWAIT cannot be used on that file at all (the filesystem
// does not support it, no preadv2, a seccomp filter), as opposed to "not
// now" (EAGAIN).
func NowaitRefused(err error) bool {
	switch err {
	case unix.EOPNOTSUPP, unix.ENOSYS, unix.EPERM, unix.EINVAL:
		return true
	}
	return false
}

// beginNowait refuses a page-cache attempt once the scheduler is closed,
// and returns when it began for the Tracer (0 without one).
func (s *Scheduler) beginNowait() (start int64, err error) {
	if s.state.Load()&stateClosed != 0 {
		return 0, ErrClosed
	}
	if s.tracer != nil {
		start = Now()
	}
	return start, nil
}

// traceNowait reports c, a page-cache attempt begun at start, to the
// Tracer as an inline request, unless it found nothing (EAGAIN) or was
// refused: then it is not a request of its own, and the caller sends it
// on through ReadAt or WriteAt, which reports it.
func (s *Scheduler) traceNowait(c sysCall, start int64, n int, err error) {
	if err == unix.EAGAIN || NowaitRefused(err) {
		return
	}
	s.traceInline(RequestEvent{Op: c.op(), Fd: c.fd, Off: c.off, Len: len(c.buf), Nowait: true, Submits: c.retry() + 1, N: n, Err: err}, start)
}

// traceInline reports ev to the Tracer: a request made on its caller's
// goroutine without a request of the scheduler's (a page-cache attempt,
// an inline write, a copy of a File in memory), begun at start and
// ending now. It fills in the backend and the timeline.
func (s *Scheduler) traceInline(ev RequestEvent, start int64) {
	end := Now()
	ev.Backend, ev.Inline = s.backend, true
	ev.Enqueue, ev.Submit, ev.Complete, ev.Resume = start, start, end, end
	s.tracer.RequestDone(ev)
}

// rawNowaitMax is the largest page-cache attempt made without telling the
// runtime it is in a system call (RawSyscall6: no entersyscall, so the
// runtime never hands the P to a new thread during it), when a hit is
// expected. A hit does not wait for the disk or for locks; what is left is
// the copy. Under CPU contention a descheduled thread in an ordinary
// system call makes the runtime start another (os.File's pread too);
// raw, the process keeps its threads. A miss is different: it submits the
// read-ahead from the calling thread, which can sleep, and raw it would
// hold the P meanwhile, hence expectHit. Larger copies take long enough
// that holding the P would delay other goroutines and the GC. (Figures:
// docs/notes/2026-11-28-design-figures.md.)
const rawNowaitMax = 64 << 10

// WriteAtInline writes p at off on the caller's goroutine, as os.File
// writes: pwrite64 (pwritev2 with rwf, or at the descriptor's own offset
// when off is -1), EINTR retried and short writes continued. It is for a
// write the caller knows waits for no disk read (a copy into the page
// cache): unlike WriteAtNowait it does not refuse to wait, so a write
// that does wait holds the calling thread. A write that makes no
// progress ends with io.ErrShortWrite; a kernel error is a bare
// syscall.Errno, with the count written before it.
//
// Its system calls go through the scheduler's calls (syscall_linux.go):
// with Options.Faults, the injector sees each attempt (Path
// PathPageCache); with a Tracer, each is a SysPwrite (or SysPwritev2)
// call, and the whole an inline request, as ReadAtNowait reports its
// hits.
func (f *File) WriteAtInline(p []byte, off int64, rwf uint32) (int, error) {
	s := f.s
	if s.state.Load()&stateClosed != 0 {
		return 0, ErrClosed
	}
	var start int64
	if s.tracer != nil {
		start = Now()
	}
	c := sysCall{kind: callOf(OpWrite, PathPageCache, false), fd: f.fd, flags: rwf}
	done := 0
	var err error
	for done < len(p) {
		c.buf, c.off = p[done:], off
		if off >= 0 {
			c.off += int64(done)
		}
		n, e := s.call(c)
		c.retried()
		if e == unix.EINTR || e == unix.EAGAIN && c.retry() < sys.AgainLimit {
			// EINTR: injected (package sys retries the kernel's).
			// EAGAIN: a descriptor in non-blocking mode, or an
			// injected fault; a regular file's write does not say it
			// otherwise.
			continue
		}
		if e != nil {
			err = e
			break
		}
		if n <= 0 {
			err = io.ErrShortWrite
			break
		}
		done += n
	}
	if s.tracer != nil {
		s.traceInline(RequestEvent{Op: OpWrite, Fd: f.fd, Off: off, Len: len(p), Submits: c.retry(), N: done, Err: err}, start)
	}
	return done, err
}
