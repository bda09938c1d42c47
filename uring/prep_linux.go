//go:build linux

package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Prep methods fill an SQE from GetSQE for one operation. They keep any
// flags and user data already set. fd is a file descriptor, or an index into
// the registered files when IOSQE_FIXED_FILE is set. Memory they reference
// must stay valid and unmoved until the completion is reaped (see the
// package doc). An offset of -1 means the file's current position.

func (s *SQE) prepRW(op Op, fd int, addr unsafe.Pointer, n uint32, off int64) {
	s.Opcode = op
	s.Fd = int32(fd)
	s.Addr = uint64(uintptr(addr))
	s.Len = n
	s.Off = uint64(off)
}

func bufAddr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func iovAddr(v []unix.Iovec) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(v)) }

// PrepNop prepares a request that does nothing and completes with 0.
func (s *SQE) PrepNop() { s.Opcode = IORING_OP_NOP; s.Fd = -1 }

// PrepRead prepares pread(fd, buf, off).
func (s *SQE) PrepRead(fd int, buf []byte, off int64) {
	s.prepRW(IORING_OP_READ, fd, bufAddr(buf), uint32(len(buf)), off)
}

// PrepWrite prepares pwrite(fd, buf, off).
func (s *SQE) PrepWrite(fd int, buf []byte, off int64) {
	s.prepRW(IORING_OP_WRITE, fd, bufAddr(buf), uint32(len(buf)), off)
}

// PrepReadv prepares preadv(fd, iovs, off). The iovec array itself must
// also stay valid until completion (with IORING_FEAT_SUBMIT_STABLE the
// kernel copies it at submission, but SQPOLL submits later).
func (s *SQE) PrepReadv(fd int, iovs []unix.Iovec, off int64) {
	s.prepRW(IORING_OP_READV, fd, iovAddr(iovs), uint32(len(iovs)), off)
}

// PrepWritev prepares pwritev(fd, iovs, off).
func (s *SQE) PrepWritev(fd int, iovs []unix.Iovec, off int64) {
	s.prepRW(IORING_OP_WRITEV, fd, iovAddr(iovs), uint32(len(iovs)), off)
}

// PrepReadFixed prepares a read into buf, which must lie inside registered
// buffer number index (RegisterBuffers).
func (s *SQE) PrepReadFixed(fd int, buf []byte, off int64, index uint16) {
	s.prepRW(IORING_OP_READ_FIXED, fd, bufAddr(buf), uint32(len(buf)), off)
	s.BufIndex = index
}

// PrepWriteFixed prepares a write from buf inside registered buffer index.
func (s *SQE) PrepWriteFixed(fd int, buf []byte, off int64, index uint16) {
	s.prepRW(IORING_OP_WRITE_FIXED, fd, bufAddr(buf), uint32(len(buf)), off)
	s.BufIndex = index
}

// PrepFsync prepares fsync(fd), or fdatasync(fd) with IORING_FSYNC_DATASYNC.
func (s *SQE) PrepFsync(fd int, flags uint32) {
	s.prepRW(IORING_OP_FSYNC, fd, nil, 0, 0)
	s.OpFlags = flags
}

// PrepFallocate prepares fallocate(fd, mode, off, length).
func (s *SQE) PrepFallocate(fd int, mode uint32, off, length int64) {
	s.prepRW(IORING_OP_FALLOCATE, fd, nil, mode, off)
	s.Addr = uint64(length)
}

// PrepUnlinkat prepares unlinkat(dirfd, path, flags) (Linux 5.11). path
// is NUL-terminated, and must stay alive and unmoved until the request
// completes.
func (s *SQE) PrepUnlinkat(dirfd int, path []byte, flags uint32) {
	s.prepRW(IORING_OP_UNLINKAT, dirfd, bufAddr(path), 0, 0)
	s.OpFlags = flags
}

// PrepPollAdd prepares a one-shot poll of fd for events (unix.POLLIN...).
func (s *SQE) PrepPollAdd(fd int, events uint32) {
	s.prepRW(IORING_OP_POLL_ADD, fd, nil, 0, 0)
	s.OpFlags = events
}

// PrepTimeout prepares a timeout that completes with -ETIME after ts, or
// with 0 once count other completions have arrived (count 0: time only).
func (s *SQE) PrepTimeout(ts *Timespec, count uint32, flags uint32) {
	s.prepRW(IORING_OP_TIMEOUT, -1, unsafe.Pointer(ts), 1, int64(count))
	s.OpFlags = flags
}

// PrepLinkTimeout prepares a timeout for the request linked before it (that
// request needs IOSQE_IO_LINK): if it has not completed after ts it is
// cancelled (-ECANCELED) and the timeout completes with -ETIME.
func (s *SQE) PrepLinkTimeout(ts *Timespec, flags uint32) {
	s.prepRW(IORING_OP_LINK_TIMEOUT, -1, unsafe.Pointer(ts), 1, 0)
	s.OpFlags = flags
}

// PrepCancel prepares the cancellation of the request whose user data is
// target. It completes with 0 when found and cancelled, -ENOENT when not
// found, -EALREADY when the request was already running.
func (s *SQE) PrepCancel(target uint64, flags uint32) {
	s.prepRW(IORING_OP_ASYNC_CANCEL, -1, nil, 0, 0)
	s.Addr = target
	s.OpFlags = flags
}

// PrepCancelFd prepares the cancellation of requests on fd
// (IORING_ASYNC_CANCEL_FD, with IORING_ASYNC_CANCEL_ALL for all of them).
func (s *SQE) PrepCancelFd(fd int, flags uint32) {
	s.prepRW(IORING_OP_ASYNC_CANCEL, fd, nil, 0, 0)
	s.OpFlags = flags | IORING_ASYNC_CANCEL_FD
}
