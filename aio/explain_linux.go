//go:build linux

package aio

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
)

// ExplainEINVAL returns err unchanged unless it is EINVAL (from IOEvent.Result
// or Submit) for the read or write cb on a file open with O_DIRECT. Then it
// returns a *dio.EINVALError that names the alignment O_DIRECT requires of
// cb's file and which part of the request violates it: with O_DIRECT an
// EINVAL almost always means a misaligned offset, length or buffer, and the
// bare errno does not say so. For PREADV/PWRITEV only the offset is checked
// (the iovecs are the caller's). Call it while cb's file is still open.
func ExplainEINVAL(err error, cb *IOCB) error {
	if err == nil || !errors.Is(err, unix.EINVAL) {
		return err
	}
	var op string
	length, addr := int(cb.Nbytes), uintptr(cb.Buf)
	switch cb.Opcode {
	case IOCB_CMD_PREAD:
		op = "pread"
	case IOCB_CMD_PWRITE:
		op = "pwrite"
	case IOCB_CMD_PREADV:
		op, length, addr = "preadv", 0, 0
	case IOCB_CMD_PWRITEV:
		op, length, addr = "pwritev", 0, 0
	default:
		return err
	}
	if fl, ferr := unix.FcntlInt(uintptr(cb.Fildes), unix.F_GETFL, 0); ferr != nil || fl&unix.O_DIRECT == 0 {
		return err // not direct I/O (or no longer open): alignment is not the cause
	}
	a, aerr := dio.ForFD(int(cb.Fildes))
	if aerr != nil {
		return err
	}
	return dio.ExplainEINVAL(op, cb.Offset, length, addr, a)
}
