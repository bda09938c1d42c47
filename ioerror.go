package diskio

import (
	"io/fs"
	"strconv"
)

// IOError is a read or write the kernel failed, for example with EIO or
// ENOSPC. It is the *fs.PathError os.File would return, with the range
// the caller asked for: errors.As finds the PathError, whose Op and Path
// are os.File's and whose Err is the bare errno (pe.Err == syscall.EIO
// holds, as errors.Is(err, syscall.EIO) does), and errors.As finds the
// IOError itself for Off and Len. Nothing else is wrapped: the IOError is
// the one layer over the PathError, as the PathError is over the errno.
//
// Other failures (a closed file, a bad argument, the access mode) are a
// plain *fs.PathError, as os.File's.
type IOError struct {
	fs.PathError
	Off int64 // the caller's offset
	Len int   // the caller's length
}

func (e *IOError) Error() string {
	return e.Op + " " + e.Path + " at offset " + strconv.FormatInt(e.Off, 10) +
		" (" + strconv.Itoa(e.Len) + " bytes): " + e.Err.Error()
}

// Unwrap returns the *fs.PathError.
func (e *IOError) Unwrap() error { return &e.PathError }
