//go:build linux

package sched

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// blockingDo performs r with plain system calls on the caller's goroutine:
// the runtime parks an OS thread per call in flight, exactly as os.File
// does. It is the baseline and the last fallback. With an injector, each
// attempt is offered to it first (PathCaller), as the loop offers its
// own.
func blockingDo(r *request, t Tracer, inj FaultInjector) {
	if r.op == OpNop {
		r.submits++
		return
	}
	for {
		var f Fault
		if inj != nil {
			f = inj.Fault(r.attempt(PathCaller))
		}
		var start int64
		if t != nil {
			start = Now()
		}
		r.submits++
		var n int
		var err error
		switch {
		case f.Errno != 0:
			err = f.Errno
		case f.Drop && (r.op == OpFsync || r.op == OpFdatasync):
		default:
			b := r.remaining()
			if f.Short > 0 && f.Short < len(b) {
				b = b[:f.Short]
			}
			n, err = blockingCall(r, b)
		}
		if f.Delay > 0 {
			time.Sleep(f.Delay)
		}
		if t != nil {
			t.SyscallDone(SyscallEvent{Call: blockingCalls[r.op], Start: start, End: Now(), Submitted: 1, Reaped: 1})
		}
		res := int32(n)
		if err != nil {
			res = -int32(err.(unix.Errno))
		}
		if finish(r, res) {
			return
		}
	}
}

// blockingCall makes r's system call once; b is what is left of a read or
// write's buffer (its remainder, or less of it).
func blockingCall(r *request, b []byte) (int, error) {
	fd, off := int(r.fd), r.off+int64(r.done)
	switch r.op {
	case OpRead:
		return sys.Pread(fd, b, off)
	case OpWrite:
		if r.rwf != 0 {
			return sys.Pwritev2(fd, b, off, int(r.rwf))
		}
		return sys.Pwrite(fd, b, off)
	case OpFsync:
		return 0, sys.Fsync(fd)
	case OpFdatasync:
		return 0, sys.Fdatasync(fd)
	case OpFallocate:
		return 0, sys.Fallocate(fd, r.mode, r.off, r.size)
	case OpUnlink:
		return 0, sys.Unlinkat(fd, string(r.buf[:len(r.buf)-1]), int(r.mode))
	}
	return 0, nil
}

var blockingCalls = [...]Syscall{OpRead: SysPread, OpWrite: SysPwrite, OpFsync: SysFsync, OpFdatasync: SysFdatasync, OpFallocate: SysFallocate, OpUnlink: SysUnlinkat}
