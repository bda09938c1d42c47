//go:build linux

package diskio

// The system calls this package makes itself, each wrapped once: EINTR
// retried, errors left bare for the caller to wrap at the API edge.

import (
	"golang.org/x/sys/unix"
)

// setfl sets fd's file status flags (F_SETFL).
func setfl(fd, fl int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl)
	return err
}

// ignoringEINTR calls fn until it fails with something other than EINTR.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// sysOpen opens path (relative to the working directory) with flag,
// retrying EINTR, as os.OpenFile does.
func sysOpen(path string, flag int) (fd int, err error) {
	err = ignoringEINTR(func() error {
		fd, err = unix.Open(path, flag|unix.O_CLOEXEC, 0)
		return err
	})
	return fd, err
}
