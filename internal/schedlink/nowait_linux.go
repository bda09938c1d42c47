package schedlink

import "golang.org/x/sys/unix"

// NowaitRefused reports whether err from ReadAtNowait or WriteAtNowait
// means RWF_NOWAIT cannot be used on that file at all (the filesystem
// does not support it, no preadv2, a seccomp filter), as opposed to "not
// now" (EAGAIN).
func NowaitRefused(err error) bool {
	switch err {
	case unix.EOPNOTSUPP, unix.ENOSYS, unix.EPERM, unix.EINVAL:
		return true
	}
	return false
}
