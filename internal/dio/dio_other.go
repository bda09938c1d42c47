//go:build !linux

package dio

import (
	"fmt"
	"os"
	"runtime"
)

// ForFD returns [Default]: direct I/O alignment is only discovered on Linux.
func ForFD(fd int) (Alignment, error) { return Default(), nil }

// ForFile returns [Default]: direct I/O alignment is only discovered on
// Linux.
func ForFile(f *os.File) (Alignment, error) { return Default(), nil }

// ForPath returns [Default]: direct I/O alignment is only discovered on
// Linux.
func ForPath(path string) (Alignment, error) { return Default(), nil }

func errNotLinux(path string) error {
	return fmt.Errorf("dio: %s: O_DIRECT is not available on %s: %w", path, runtime.GOOS, ErrUnsupported)
}

// FSType is only implemented on Linux; elsewhere it returns an error
// matching [ErrUnsupported].
func FSType(path string) (string, error) { return "", errNotLinux(path) }

// OpenDirect is only implemented on Linux; elsewhere it returns an error
// matching [ErrUnsupported].
func OpenDirect(path string, flag int, perm os.FileMode) (*os.File, error) {
	return nil, errNotLinux(path)
}

// Probe is only implemented on Linux; elsewhere it returns an error matching
// [ErrUnsupported].
func Probe(dir string) error { return errNotLinux(dir) }

// ProbeAlignment is only implemented on Linux; elsewhere it returns an error
// matching [ErrUnsupported].
func ProbeAlignment(dir string) (Alignment, error) { return Alignment{}, errNotLinux(dir) }
