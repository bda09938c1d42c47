//go:build linux

package aio

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// DIOAlign reports the alignment O_DIRECT requires of fd: memAlign for buffer
// addresses and offsetAlign for file offsets and lengths (the device's
// logical block size), from statx(STATX_DIOALIGN), Linux 6.1. For a block
// device it falls back to the BLKSSZGET ioctl. Zero values with a nil error
// mean the file does not support direct I/O.
func DIOAlign(fd int) (memAlign, offsetAlign int, err error) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_TYPE|unix.STATX_DIOALIGN, &st); err != nil {
		return 0, 0, os.NewSyscallError("statx", err)
	}
	if st.Mask&unix.STATX_DIOALIGN != 0 && st.Dio_offset_align != 0 {
		return int(st.Dio_mem_align), int(st.Dio_offset_align), nil
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		n, err := unix.IoctlGetInt(fd, unix.BLKSSZGET)
		if err != nil {
			return 0, 0, os.NewSyscallError("ioctl BLKSSZGET", err)
		}
		return n, n, nil
	}
	if st.Mask&unix.STATX_DIOALIGN == 0 {
		return 0, 0, os.NewSyscallError("statx", unix.EOPNOTSUPP)
	}
	return 0, 0, nil
}

// AlignmentError is an EINVAL from an O_DIRECT read or write, with the
// request and the alignment the file requires. It unwraps to syscall.EINVAL.
type AlignmentError struct {
	Op          string // "pread", "pwrite", "preadv" or "pwritev"
	Fd          int
	Offset      int64
	Length      uint64 // bytes, or the iovec count for preadv/pwritev
	Addr        uint64 // buffer address (iovec array address for preadv/pwritev)
	MemAlign    int    // required buffer alignment, 0 if unknown
	OffsetAlign int    // required offset and length alignment (logical block size), 0 if unknown
}

func (e *AlignmentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "aio: %s fd %d offset %d ", e.Op, e.Fd, e.Offset)
	vectored := e.Op == "preadv" || e.Op == "pwritev"
	if vectored {
		fmt.Fprintf(&b, "iovecs %d", e.Length)
	} else {
		fmt.Fprintf(&b, "length %d buffer %#x", e.Length, e.Addr)
	}
	b.WriteString(": EINVAL: O_DIRECT requires offset, length and buffer address aligned to the device's logical block size (")
	if e.OffsetAlign > 0 {
		fmt.Fprintf(&b, "%d", e.OffsetAlign)
	} else {
		b.WriteString("unknown")
	}
	b.WriteString(")")
	if e.MemAlign > 0 && e.MemAlign != e.OffsetAlign {
		fmt.Fprintf(&b, "; this device accepts buffers aligned to %d", e.MemAlign)
	}
	if e.OffsetAlign <= 0 {
		return b.String()
	}
	var bad []string
	if e.Offset%int64(e.OffsetAlign) != 0 {
		bad = append(bad, "offset")
	}
	if !vectored {
		if e.Length%uint64(e.OffsetAlign) != 0 {
			bad = append(bad, "length")
		}
		if ma := max(e.MemAlign, 1); e.Addr%uint64(ma) != 0 {
			bad = append(bad, "buffer address")
		}
	}
	switch {
	case len(bad) > 0:
		fmt.Fprintf(&b, "; misaligned: %s", strings.Join(bad, ", "))
	case vectored:
		b.WriteString("; check each iovec's base and length")
	default:
		b.WriteString("; this request is aligned, so the EINVAL has another cause (file system without direct I/O support?)")
	}
	return b.String()
}

func (e *AlignmentError) Unwrap() error { return unix.EINVAL }

// ExplainEINVAL returns err unchanged unless it is EINVAL (from IOEvent.Result
// or Submit) for the read or write cb on a file open with O_DIRECT. Then it
// returns an *AlignmentError that names the alignment O_DIRECT requires of
// cb's file (found with DIOAlign) and which part of the request violates it:
// with O_DIRECT an EINVAL almost always means a misaligned offset, length or
// buffer, and the bare errno does not say so. Call it while cb's file is
// still open.
func ExplainEINVAL(err error, cb *IOCB) error {
	if err == nil || !errors.Is(err, unix.EINVAL) {
		return err
	}
	var op string
	switch cb.Opcode {
	case IOCB_CMD_PREAD:
		op = "pread"
	case IOCB_CMD_PWRITE:
		op = "pwrite"
	case IOCB_CMD_PREADV:
		op = "preadv"
	case IOCB_CMD_PWRITEV:
		op = "pwritev"
	default:
		return err
	}
	if fl, ferr := unix.FcntlInt(uintptr(cb.Fildes), unix.F_GETFL, 0); ferr != nil || fl&unix.O_DIRECT == 0 {
		return err // not direct I/O (or no longer open): alignment is not the cause
	}
	e := &AlignmentError{Op: op, Fd: int(cb.Fildes), Offset: cb.Offset, Length: cb.Nbytes, Addr: cb.Buf}
	e.MemAlign, e.OffsetAlign, _ = DIOAlign(int(cb.Fildes))
	return e
}
