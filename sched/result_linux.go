//go:build linux

package sched

import (
	"errors"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/sys"
)

// finish records the kernel's result res for r and says whether r is done
// (false: resubmit the remainder). A failure is the kernel's bare errno
// (EINVAL on an O_DIRECT file explained with its alignment): the caller
// knows which request it made, and wraps the error once, at its API edge
// (package diskio's File gives an *fs.PathError or an *diskio.IOError, as
// os.File does).
func finish(r *request, res int32) bool {
	if res < 0 {
		errno := syscall.Errno(-res)
		if r.tryNowait && (errno == unix.EAGAIN || errno == unix.EOPNOTSUPP) {
			// The write would block (it extends the file, goes
			// through the page cache, or waits for a lock): its
			// caller makes the rest of it (caller_linux.go).
			r.err = errWouldBlock
			return true
		}
		switch errno {
		case unix.EINTR:
			return false // retry as is
		case unix.EAGAIN:
			// A regular file's I/O says EAGAIN only on a descriptor in
			// non-blocking mode or when the kernel is short of
			// resources for a moment: retry a bounded number of times,
			// then report it, as the caller's paths do (sys.AgainLimit).
			if r.again++; r.again < sys.AgainLimit {
				return false
			}
			r.err = errno
			return true
		case unix.EINVAL:
			if r.op == OpRead && r.done > 0 {
				// The remainder of a short read was refused: on
				// an O_DIRECT file a short read ends at end of
				// file, which need not be aligned, and a read from
				// an unaligned offset is EINVAL. It was the end.
				return true
			}
			if r.op == OpRead || r.op == OpWrite {
				r.err = explainEINVAL(r)
				return true
			}
			r.err = errno
			return true
		default:
			r.err = errno
			return true
		}
	}
	switch r.op {
	case OpRead, OpWrite:
		r.done += int(res)
		if r.done >= len(r.buf) {
			return true
		}
		if res == 0 {
			if r.op == OpWrite {
				r.err = errShortWrite
			}
			return true // a read of 0 bytes: end of file
		}
		return false // short: go on from r.done
	}
	return true
}

// errWouldBlock ends a tryNowait write that the kernel could not make
// without blocking; it never reaches a caller.
var errWouldBlock = errors.New("sched: write would block")

var errShortWrite = errors.New("sched: write made no progress (0 bytes written)")

// explainEINVAL is the error for a read or write that failed with EINVAL:
// on an O_DIRECT descriptor, an *dio.EINVALError that says which part of
// the request breaks the alignment; on any other descriptor (a directory
// whose offset is past what read accepts, a buffered file) the bare
// EINVAL, as os.File gives it.
func explainEINVAL(r *request) error {
	fl, err := sys.Fcntl(int(r.fd), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_DIRECT == 0 {
		return syscall.EINVAL
	}
	a, err := dio.ForFD(int(r.fd))
	if err != nil {
		return syscall.EINVAL
	}
	rem := r.remaining()
	return dio.ExplainEINVAL(r.op.String(), r.off+int64(r.done), len(rem), uintptr(unsafe.Pointer(unsafe.SliceData(rem))), a)
}
