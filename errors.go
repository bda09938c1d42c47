package diskio

import (
	"errors"
	"io/fs"
)

// The errors for bad arguments, worded as os.File's.
var (
	errNegativeOffset = errors.New("negative offset")
	errNegativeRange  = errors.New("negative offset or length")
)

// negativeOffset is os.File's error for a negative offset given to op.
func negativeOffset(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: errNegativeOffset}
}

// negativeRange is the error for a negative offset or length given to op.
func negativeRange(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: errNegativeRange}
}
