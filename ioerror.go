package diskio

import (
	"io/fs"
	"strconv"
)

// IOError is a read or write the kernel failed, for example with EIO or
// ENOSPC. It holds an *fs.PathError exactly as os.File would return it:
// errors.As finds it, its Op and Path are os.File's and its Err is the
// bare errno, so pe.Err == syscall.EIO holds, as errors.Is(err,
// syscall.EIO) does. The text adds the caller's offset and length, and
// Request, the scheduler's own account of the request that failed
// (*sched.IOError on Linux, in the aligned terms the kernel saw), stays
// reachable with errors.As.
//
// Other failures (a closed file, a bad argument, the access mode) are a
// plain *fs.PathError, as os.File's.
type IOError struct {
	fs.PathError
	Off     int64 // the caller's offset
	Len     int   // the caller's length
	Request error // what the scheduler issued and the kernel refused
}

func (e *IOError) Error() string {
	return e.Op + " " + e.Path + " at offset " + strconv.FormatInt(e.Off, 10) +
		" (" + strconv.Itoa(e.Len) + " bytes): " + e.Err.Error()
}

// Unwrap returns the *fs.PathError and the Request.
func (e *IOError) Unwrap() []error {
	if e.Request == nil {
		return []error{&e.PathError}
	}
	return []error{&e.PathError, e.Request}
}
