//go:build linux

package sched

import (
	"strconv"
	"syscall"
)

// IOError is a read or write the kernel failed: which request, where, and
// the errno (errors.Is(err, syscall.EIO) sees through it). Off and Len are
// the part of the request still to transfer when it failed, in the
// request's own terms (for a File's unaligned I/O, the aligned span).
type IOError struct {
	Op  Op
	Off int64
	Len int
	Err syscall.Errno
}

func (e *IOError) Error() string {
	return e.Op.String() + " at offset " + strconv.FormatInt(e.Off, 10) + " (" + strconv.Itoa(e.Len) + " bytes): " + e.Err.Error()
}

func (e *IOError) Unwrap() error { return e.Err }

// Is lets errors.Is match the errno's own equivalences (os.ErrPermission
// for EPERM, and so on), as it does for a bare Errno.
func (e *IOError) Is(target error) bool { return e.Err.Is(target) }

// failed records errno as r's final error: reads and writes say where.
func failed(r *request, errno syscall.Errno) error {
	if r.op == OpRead || r.op == OpWrite {
		return &IOError{Op: r.op, Off: r.off + int64(r.done), Len: len(r.buf) - r.done, Err: errno}
	}
	return errno
}
