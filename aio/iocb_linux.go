//go:build linux

package aio

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// struct iocb is 64 bytes on every architecture.
var (
	_ [64 - unsafe.Sizeof(IOCB{})]byte
	_ [unsafe.Sizeof(IOCB{}) - 64]byte
)

// PrepPread makes cb a read of len(buf) bytes from fd at offset off into buf.
// buf must stay valid and unmoved until the completion is reaped (see the
// package documentation). Every Prep method overwrites all of cb.
func (cb *IOCB) PrepPread(fd int, buf []byte, off int64) {
	*cb = IOCB{Opcode: IOCB_CMD_PREAD, Fildes: uint32(fd), Buf: addrOf(buf), Nbytes: uint64(len(buf)), Offset: off}
}

// PrepPwrite makes cb a write of buf to fd at offset off.
func (cb *IOCB) PrepPwrite(fd int, buf []byte, off int64) {
	*cb = IOCB{Opcode: IOCB_CMD_PWRITE, Fildes: uint32(fd), Buf: addrOf(buf), Nbytes: uint64(len(buf)), Offset: off}
}

// PrepPreadv makes cb a vectored read from fd at offset off into the buffers
// iovs describe. The kernel copies the iovec array during io_submit, so iovs
// need only live until Submit returns; the buffers it points to must live
// until completion.
func (cb *IOCB) PrepPreadv(fd int, iovs []unix.Iovec, off int64) {
	*cb = IOCB{Opcode: IOCB_CMD_PREADV, Fildes: uint32(fd), Buf: iovAddr(iovs), Nbytes: uint64(len(iovs)), Offset: off}
}

// PrepPwritev makes cb a vectored write of the buffers iovs describes to fd
// at offset off. See PrepPreadv for lifetimes.
func (cb *IOCB) PrepPwritev(fd int, iovs []unix.Iovec, off int64) {
	*cb = IOCB{Opcode: IOCB_CMD_PWRITEV, Fildes: uint32(fd), Buf: iovAddr(iovs), Nbytes: uint64(len(iovs)), Offset: off}
}

// PrepFsync makes cb an fsync(2) of fd. The kernel runs it on a worker
// thread, so it is asynchronous even though the file system's fsync is not.
func (cb *IOCB) PrepFsync(fd int) {
	*cb = IOCB{Opcode: IOCB_CMD_FSYNC, Fildes: uint32(fd)}
}

// PrepFdsync makes cb an fdatasync(2) of fd.
func (cb *IOCB) PrepFdsync(fd int) {
	*cb = IOCB{Opcode: IOCB_CMD_FDSYNC, Fildes: uint32(fd)}
}

// PrepPoll makes cb wait until fd reports one of the poll(2) events (POLLIN,
// POLLOUT, ...); the event's res holds the events that fired. A file that is
// already ready completes during io_submit. Poll requests, unlike file I/O,
// can be cancelled.
func (cb *IOCB) PrepPoll(fd int, events int16) {
	*cb = IOCB{Opcode: IOCB_CMD_POLL, Fildes: uint32(fd), Buf: uint64(uint16(events))}
}

// SetResfd asks the kernel to signal the eventfd efd when cb completes
// (IOCB_FLAG_RESFD): each completion adds 1 to the eventfd's counter.
func (cb *IOCB) SetResfd(efd int) {
	cb.Flags |= IOCB_FLAG_RESFD
	cb.Resfd = uint32(efd)
}

// addrOf returns the address of buf's first byte as the kernel stores it, or
// 0 for an empty slice.
func addrOf(buf []byte) uint64 {
	if len(buf) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&buf[0])))
}

func iovAddr(iovs []unix.Iovec) uint64 {
	if len(iovs) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&iovs[0])))
}

// Result returns the outcome of the request: the number of bytes transferred
// (for FSYNC and FDSYNC 0; for POLL the ready events), or, when res is
// negative, the error as a syscall.Errno. A read that returns fewer bytes than
// requested hit end of file (or, on some devices, was short and should be
// continued); a count of 0 for a non-empty read means offset was at or past
// end of file. For EINVAL from an O_DIRECT request, see ExplainEINVAL.
func (e *IOEvent) Result() (int, error) {
	if e.Res < 0 {
		return 0, syscall.Errno(-e.Res)
	}
	return int(e.Res), nil
}
