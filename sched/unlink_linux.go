//go:build linux

package sched

import (
	"strings"

	"golang.org/x/sys/unix"
)

// Unlinkat removes path, relative to the directory dirfd (unix.AT_FDCWD:
// the working directory), as unlinkat(2) with flags (unix.AT_REMOVEDIR
// removes an empty directory). The error is a bare syscall.Errno, or
// ErrClosed.
//
// Removing a file's last name frees its blocks, which takes a large file
// milliseconds (more on a filesystem mounted with discard), and holds a
// thread as long. On io_uring (Linux 5.11 and later) it is one of the
// operations the scheduler makes on its caller's thread, as it makes an
// fsync, at most as many at once as the worker cap
// (Options.IOWQMaxWorkers; the others wait parked); with Options.NoInline
// it is IORING_OP_UNLINKAT on one of the ring's worker threads. Where the
// ring has no such operation (the opcode probe New makes says so), and on
// the other backends, it is the system call on the caller (PathCaller).
func (s *Scheduler) Unlinkat(dirfd int, path string, flags int) error {
	if strings.IndexByte(path, 0) >= 0 {
		return unix.EINVAL
	}
	if s.backend == URing && s.ringUnlink {
		r := newRequest(OpUnlink, nil, int32(dirfd))
		r.mode = uint32(flags)
		r.buf = append(make([]byte, 0, len(path)+1), path...)
		r.buf = append(r.buf, 0)
		return s.doErr(r)
	}
	c := sysCall{kind: callOf(OpUnlink, PathCaller, false), fd: int32(dirfd), flags: uint32(flags), buf: append([]byte(path), 0)}
	_, err := s.callIgnoringEINTR(&c)
	return err
}
