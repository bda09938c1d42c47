//go:build linux

package sched

import (
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// The system calls made on callers' goroutines (every path but PathQueue:
// the idle fast path and the other caller slots of caller_linux.go, the
// blocking backend, the page-cache attempts, the copies of a File in
// memory, Unlinkat where the ring cannot) go through one sysCaller, the
// Scheduler's calls. Its default is kernelCaller, the plain calls of
// package sys; Options.Faults wraps it in a faultCaller and
// Options.Tracer in a tracedCaller, as Pebble's errorfs wraps a vfs.FS.
// So a path is the same code with and without them, and no path is
// chosen by whether there is an injector or a tracer (Scheduler.call
// only dispatches to an undecorated kernelCaller without an indirect
// call).

// sysCall is one system call made on a caller's goroutine: its
// arguments, and for a FaultInjector, where it runs and how many attempts
// of its request came before it. It is eight words, which a sysCaller
// takes in registers.
type sysCall struct {
	kind callKind
	fd   int32 // unlinkat's directory for OpUnlink
	// flags: the RWF_* flags of preadv2 or pwritev2 (RWF_NOWAIT: a
	// page-cache attempt; a read or write with none, at an offset, is
	// pread64 or pwrite64); fallocate's mode; unlinkat's flags.
	flags uint32
	off   int64  // a read or write's offset (-1: the descriptor's, pwritev2); fallocate's
	size  int64  // fallocate's length
	buf   []byte // a read or write's memory; OpUnlink's NUL-terminated path
}

// callKind is what a sysCall is, in one word: its Op, its Path, whether it
// is made raw (a small read that cannot sleep for long: one expected to
// hit the page cache, with RWF_NOWAIT in flags, or a copy from a file in
// memory that cannot be swapped out; see rawNowaitMax), and its attempt
// number (Attempt.Retry).
type callKind uint64

const (
	kindRaw        callKind = 1 << 16
	kindRetryShift          = 32
)

func callOf(op Op, path Path, raw bool) callKind {
	k := callKind(op) | callKind(path)<<8
	if raw {
		k |= kindRaw
	}
	return k
}

func (c *sysCall) op() Op       { return Op(c.kind & 0xff) }
func (c *sysCall) path() Path   { return Path(c.kind >> 8 & 0xff) }
func (c *sysCall) raw() bool    { return c.kind&kindRaw != 0 }
func (c *sysCall) retry() int32 { return int32(c.kind >> kindRetryShift) }

// retried makes c its request's next attempt.
func (c *sysCall) retried() { c.kind += 1 << kindRetryShift }

// sysCall is r's next attempt on path: what it has left to transfer.
func (r *request) sysCall(path Path) sysCall {
	c := sysCall{kind: callOf(r.op, path, false) | callKind(uint32(r.submits))<<kindRetryShift,
		fd: r.fd, flags: r.rwf, off: r.off + int64(r.done), size: r.size, buf: r.buf}
	switch r.op {
	case OpRead, OpWrite:
		c.buf = r.remaining()
	case OpFallocate, OpUnlink:
		c.flags = r.mode
	}
	return c
}

// syscall is the system call c makes.
func (c *sysCall) syscall() Syscall {
	switch c.op() {
	case OpRead:
		if c.flags != 0 {
			return SysPreadv2
		}
		return SysPread
	case OpWrite:
		if c.flags != 0 || c.off < 0 {
			return SysPwritev2
		}
		return SysPwrite
	case OpFsync:
		if c.path() == PathFlush {
			return SysSyncfs
		}
		return SysFsync
	case OpFdatasync:
		return SysFdatasync
	case OpFallocate:
		return SysFallocate
	}
	return SysUnlinkat
}

// attempt is c as a FaultInjector sees it.
func (c *sysCall) attempt() Attempt {
	a := Attempt{Op: c.op(), Fd: c.fd, Off: c.off, Retry: c.retry(), Path: c.path()}
	switch a.Op {
	case OpRead, OpWrite:
		a.Len, a.Flags = len(c.buf), c.flags
	case OpFallocate:
		a.Len = int(c.size)
	}
	return a
}

// sysCaller makes the system calls of callers' goroutines. call makes c
// once and returns what the kernel (or a fault) said: a count, and a
// bare syscall.Errno or nil. EINTR from the kernel is retried below it
// (package sys); an EINTR it returns is an injected one, which the caller
// retries as it would the kernel's.
type sysCaller interface {
	call(c sysCall) (int, error)
}

// kernelCaller makes the calls: package sys's, raw where sysCall says.
type kernelCaller struct{}

func (*kernelCaller) call(c sysCall) (int, error) {
	fd := int(c.fd)
	if c.raw() { // a read: with RWF_NOWAIT a page-cache attempt, else a copy that cannot sleep
		if c.flags != 0 {
			return sys.RawPreadv2(fd, c.buf, c.off, int(c.flags))
		}
		return sys.RawPread(fd, c.buf, c.off)
	}
	switch c.syscall() {
	case SysPreadv2:
		return sys.Preadv2(fd, c.buf, c.off, int(c.flags))
	case SysPread:
		return sys.Pread(fd, c.buf, c.off)
	case SysPwritev2:
		return sys.Pwritev2(fd, c.buf, c.off, int(c.flags))
	case SysPwrite:
		return sys.Pwrite(fd, c.buf, c.off)
	case SysFsync:
		return 0, sys.Fsync(fd)
	case SysFdatasync:
		return 0, sys.Fdatasync(fd)
	case SysFallocate:
		return 0, sys.Fallocate(fd, c.flags, c.off, c.size)
	case SysSyncfs:
		return 0, sys.Syncfs(fd)
	}
	return 0, sys.Unlinkat(fd, string(c.buf[:len(c.buf)-1]), int(c.flags))
}

// tracedCaller reports each call to a Tracer (SyscallDone), faults
// included: the time the caller spent in it, as the caller saw it.
type tracedCaller struct {
	inner  sysCaller
	tracer Tracer
}

func (t *tracedCaller) call(c sysCall) (int, error) {
	start := Now()
	n, err := t.inner.call(c)
	t.tracer.SyscallDone(SyscallEvent{Call: c.syscall(), Start: start, End: Now(), Submitted: 1, Reaped: 1})
	return n, err
}

// newSysCaller returns the calls opts asks for: the kernel's, with
// opts.Faults injected and then opts.Tracer told.
func newSysCaller(opts Options) sysCaller {
	var c sysCaller = &kernelCaller{}
	if opts.Faults != nil {
		c = &faultCaller{inner: c, inj: opts.Faults}
	}
	if opts.Tracer != nil {
		c = &tracedCaller{inner: c, tracer: opts.Tracer}
	}
	return c
}

// call makes c through s.calls. Without decorators, kernelCaller's
// method is called directly, as profile-guided devirtualization would
// call it: the same code, without an indirect call, which right after a
// system call costs far more than an interface call elsewhere
// (BenchmarkPageCacheHit in the root package; docs/notes/2026-11-28-one-door.md).
// The route and the code making the system call are the same either way.
func (s *Scheduler) call(c sysCall) (int, error) {
	if k, ok := s.calls.(*kernelCaller); ok {
		return k.call(c)
	}
	return s.calls.call(c)
}

// callIgnoringEINTR makes c until it returns something other than EINTR
// (an injected one: package sys retries the kernel's), counting the
// attempts before the last in c's retry.
func (s *Scheduler) callIgnoringEINTR(c *sysCall) (int, error) {
	for {
		n, err := s.call(*c)
		if err != unix.EINTR {
			return n, err
		}
		c.retried()
	}
}
