package dio

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// ErrUnsupported is matched (with errors.Is) by every error meaning that
// direct I/O cannot be used at a path at all: the filesystem rejects
// O_DIRECT, the kernel reports no direct I/O alignment for the file, or the
// operating system has no O_DIRECT.
var ErrUnsupported = errors.New("O_DIRECT is not supported")

// UnsupportedError reports that the filesystem at Path does not support
// direct I/O. It matches [ErrUnsupported] and errors.ErrUnsupported with
// errors.Is, and unwraps to the underlying error (typically an *os.PathError
// holding syscall.EINVAL from open(2)).
type UnsupportedError struct {
	// Path is the directory probed or the file opened.
	Path string
	// FSType names the filesystem at Path ("tmpfs", "ext4/ext2/ext3", ...),
	// from statfs(2); "" if unknown.
	FSType string
	// Err is the failure that showed direct I/O to be unsupported.
	Err error
}

func (e *UnsupportedError) Error() string {
	fs := ""
	if e.FSType != "" {
		fs = " (" + e.FSType + ")"
	}
	return fmt.Sprintf("O_DIRECT is not supported by the filesystem at %s%s: %v", e.Path, fs, e.Err)
}

// Unwrap returns the underlying error, so errors.Is(err, syscall.EINVAL)
// holds when open(2) failed with EINVAL.
func (e *UnsupportedError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrUnsupported] or errors.ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool {
	return target == ErrUnsupported || target == errors.ErrUnsupported
}

// EINVALError explains an EINVAL returned for a direct I/O request: which of
// its offset, length and buffer address break the file's alignment, or that
// none does. It unwraps to syscall.EINVAL. [ExplainEINVAL] makes one.
type EINVALError struct {
	Op     string    // the operation, e.g. "pread" or "uring write"
	Offset int64     // file offset of the request
	Length int       // length of the request in bytes
	Addr   uintptr   // address of the request's buffer
	Align  Alignment // the alignment the request was checked against

	// Which parts of the request are misaligned; all false when the
	// request looks aligned and EINVAL has another cause.
	OffsetMisaligned, LengthMisaligned, AddrMisaligned bool
}

// ExplainEINVAL returns the error to report when the request op (reading or
// writing length bytes at file offset off from or into the buffer at addr)
// failed with EINVAL on a file opened with O_DIRECT whose alignment is a.
// The result is an *[EINVALError]: its message says which of offset, length
// and buffer address is misaligned and to what alignment, or that all three
// look aligned (so the cause lies elsewhere), and errors.Is(err,
// syscall.EINVAL) holds.
func ExplainEINVAL(op string, off int64, length int, addr uintptr, a Alignment) error {
	return &EINVALError{
		Op: op, Offset: off, Length: length, Addr: addr, Align: a,
		OffsetMisaligned: !a.OffsetAligned(off),
		LengthMisaligned: !a.LengthAligned(length),
		// A request moving no bytes dereferences no buffer.
		AddrMisaligned: length != 0 && !a.AddrAligned(addr),
	}
}

// Misaligned reports whether any part of the request is misaligned.
func (e *EINVALError) Misaligned() bool {
	return e.OffsetMisaligned || e.LengthMisaligned || e.AddrMisaligned
}

func (e *EINVALError) Error() string {
	op := e.Op
	if op == "" {
		op = "direct I/O"
	}
	if !e.Misaligned() {
		return fmt.Sprintf("%s: %v on O_DIRECT file although offset %d, length %d and buffer address %#x all look aligned (%s); "+
			"the cause is elsewhere: the filesystem may not support direct I/O for this file, or the request breaks another limit of the kernel or device",
			op, syscall.EINVAL, e.Offset, e.Length, e.Addr, e.Align)
	}
	var why []string
	if e.OffsetMisaligned {
		why = append(why, fmt.Sprintf("offset %d is not a multiple of %d", e.Offset, e.Align.off()))
	}
	if e.LengthMisaligned {
		why = append(why, fmt.Sprintf("length %d is not a multiple of %d", e.Length, e.Align.off()))
	}
	if e.AddrMisaligned {
		why = append(why, fmt.Sprintf("buffer address %#x is not aligned to %d", e.Addr, e.Align.mem()))
	}
	return fmt.Sprintf("%s: %v on O_DIRECT file: %s (required alignment: %s)",
		op, syscall.EINVAL, strings.Join(why, "; "), e.Align)
}

// Unwrap returns syscall.EINVAL.
func (e *EINVALError) Unwrap() error { return syscall.EINVAL }
