//go:build linux

package sched

import (
	"golang.org/x/sys/unix"
)

// blockingDo performs r with plain system calls on the caller's goroutine:
// the runtime parks an OS thread per call in flight, exactly as os.File
// does. It is the baseline and the last fallback.
func blockingDo(r *request, t Tracer) {
	for {
		var n int
		var err error
		var start int64
		if t != nil {
			start = Now()
		}
		r.submits++
		switch r.op {
		case OpNop:
			return
		case OpRead:
			n, err = unix.Pread(int(r.fd), r.remaining(), r.off+int64(r.done))
		case OpWrite:
			if r.rwf != 0 {
				n, err = unix.Pwritev2(int(r.fd), [][]byte{r.remaining()}, r.off+int64(r.done), int(r.rwf))
			} else {
				n, err = unix.Pwrite(int(r.fd), r.remaining(), r.off+int64(r.done))
			}
		case OpFsync:
			err = unix.Fsync(int(r.fd))
		case OpFdatasync:
			err = unix.Fdatasync(int(r.fd))
		case OpFallocate:
			err = unix.Fallocate(int(r.fd), r.mode, r.off, r.size)
		case OpUnlink:
			err = unix.Unlinkat(int(r.fd), string(r.buf[:len(r.buf)-1]), int(r.mode))
		}
		if t != nil && r.op != OpNop {
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

var blockingCalls = [...]Syscall{OpRead: SysPread, OpWrite: SysPwrite, OpFsync: SysFsync, OpFdatasync: SysFdatasync, OpFallocate: SysFallocate, OpUnlink: SysUnlinkat}
