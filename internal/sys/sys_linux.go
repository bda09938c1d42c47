//go:build linux

package sys

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// AgainLimit is how many attempts of one read, write or sync may end in
// EAGAIN before the EAGAIN is the caller's error: every path that retries
// EAGAIN (a request's resubmission by the scheduler, a write made on the
// caller's goroutine) uses this bound, so a descriptor in non-blocking
// mode fails the same way whichever path its call takes.
const AgainLimit = 16

// ignoringEINTR calls fn until it returns something other than EINTR.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// ignoringEINTRN is ignoringEINTR for a call that returns a count (or a
// descriptor, an offset); the count is 0 with an error.
func ignoringEINTRN[T int | int64](fn func() (T, error)) (T, error) {
	for {
		n, err := fn()
		if err == nil {
			return n, nil
		}
		if err != unix.EINTR {
			return 0, err
		}
	}
}

// Open opens path (relative to the working directory when not absolute)
// with flag and, when it creates the file, perm: open(2), as
// openat(AT_FDCWD). O_CLOEXEC is always added, as os.OpenFile adds it.
func Open(path string, flag int, perm uint32) (fd int, err error) {
	return ignoringEINTRN(func() (int, error) { return unix.Open(path, flag|unix.O_CLOEXEC, perm) })
}

// Close closes fd: close(2). It is the one call not retried on EINTR. On
// Linux the descriptor is released before close(2) reports anything, an
// EINTR included (close(2), "Dealing with error returns from close()"):
// by then the number may belong to a file another thread just opened,
// which a second close would close. The error is reported once and fd is
// closed whatever it says.
func Close(fd int) error {
	return unix.Close(fd)
}

// Pread reads into p from fd at off: pread64(2). n < len(p) with a nil
// error is a short read; n == 0 with a nil error and len(p) > 0 is end of
// file.
func Pread(fd int, p []byte, off int64) (n int, err error) {
	return call(unix.SYS_PREAD64, fd, p, off, 0, 0)
}

// Pwrite writes p to fd at off: pwrite64(2). n < len(p) with a nil error
// is a short write, which the caller continues or reports.
func Pwrite(fd int, p []byte, off int64) (n int, err error) {
	return call(unix.SYS_PWRITE64, fd, p, off, 0, 0)
}

// Read reads into p from fd at its offset: read(2). For descriptors that
// are not files (an eventfd's counter); a file's reads say where.
func Read(fd int, p []byte) (n int, err error) {
	return call(unix.SYS_READ, fd, p, 0, 0, 0)
}

// RawWrite writes p to fd at its offset: write(2), as a raw system call
// (see the package doc). It is for a write that cannot block: an
// eventfd's counter (which would have to reach 2^64-2 first), where a
// wake-up must not let the runtime start a thread for the waker while the
// woken thread runs.
func RawWrite(fd int, p []byte) (n int, err error) {
	return call(unix.SYS_WRITE, fd, p, 0, 0, raw)
}

// Preadv2 reads into p from fd at off with flags (RWF_NOWAIT, RWF_HIPRI):
// preadv2(2) of one buffer, off == -1 meaning the descriptor's offset.
// The iovec lives on the stack (x/sys/unix's Preadv2 allocates one a
// call). Counts as Pread's; with RWF_NOWAIT, EAGAIN says nothing could be
// read without waiting (the kernel may also read less than is cached:
// preadv2(2) BUGS), and EOPNOTSUPP that fd's filesystem does not take the
// flag.
func Preadv2(fd int, p []byte, off int64, flags int) (n int, err error) {
	return call(unix.SYS_PREADV2, fd, p, off, flags, vector)
}

// Pwritev2 writes p to fd at off with flags (RWF_NOWAIT, RWF_DSYNC,
// RWF_SYNC, RWF_APPEND): pwritev2(2) of one buffer, off == -1 meaning the
// descriptor's offset. Counts as Pwrite's; errors as Preadv2's.
func Pwritev2(fd int, p []byte, off int64, flags int) (n int, err error) {
	return call(unix.SYS_PWRITEV2, fd, p, off, flags, vector)
}

// RawPreadv2 is Preadv2 with RWF_NOWAIT, always added, made as a raw
// system call (see the package doc). It is for a read the caller expects
// the page cache to hold, of at most a few tens of KiB (a copy that
// holds the P for a few µs at most): RWF_NOWAIT keeps it from waiting for
// the disk, but a miss still starts the kernel's read-ahead from the
// calling thread, which can sleep there, with the P held. When a miss is
// likely, use Preadv2.
func RawPreadv2(fd int, p []byte, off int64, flags int) (n int, err error) {
	return call(unix.SYS_PREADV2, fd, p, off, flags|unix.RWF_NOWAIT, vector|raw)
}

// RawPread is Pread made as a raw system call (see the package doc). It
// is for a copy that cannot wait for a device (a file in memory with no
// swap to page it out to), of at most a few tens of KiB: a copy that
// holds the P for a few µs at most.
func RawPread(fd int, p []byte, off int64) (n int, err error) {
	return call(unix.SYS_PREAD64, fd, p, off, 0, raw)
}

// How call makes its system call.
const (
	raw    = 1 << iota // syscall.RawSyscall6, not Syscall6
	vector             // p as one iovec (preadv2, pwritev2), not a buffer and length
)

// call makes the system call trap of a buffer p at off with flags, as how
// says, retrying EINTR: (fd, p, len(p), off, 0, 0) or, with vector,
// (fd, &iov, 1, off, its high word, flags). The wrappers above inline, so
// each costs one Go call (this one) around syscall.Syscall6 or
// RawSyscall6, which never inline.
func call(trap uintptr, fd int, p []byte, off int64, flags int, how int) (int, error) {
	a2, a3 := uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p))
	var iov unix.Iovec
	if how&vector != 0 {
		iov.Base = unsafe.SliceData(p)
		iov.SetLen(len(p))
		a2, a3 = uintptr(unsafe.Pointer(&iov)), 1
	}
	// The offset's high word is 0 on 64-bit systems (the kernel takes
	// it from the low word), as x/sys/unix's offs2lohi computes it.
	lo, hi := uintptr(off), uintptr(uint64(off)>>(unsafe.Sizeof(uintptr(0))*8-1)>>1)
	for {
		var r uintptr
		var e syscall.Errno
		if how&raw != 0 {
			r, _, e = syscall.RawSyscall6(trap, uintptr(fd), a2, a3, lo, hi, uintptr(flags))
		} else {
			r, _, e = syscall.Syscall6(trap, uintptr(fd), a2, a3, lo, hi, uintptr(flags))
		}
		if e == 0 {
			return int(r), nil
		}
		if e != unix.EINTR {
			return 0, e
		}
	}
}

// Eventfd creates an eventfd with the counter initval and flags
// (EFD_CLOEXEC, EFD_NONBLOCK): eventfd2(2).
func Eventfd(initval uint, flags int) (fd int, err error) {
	return ignoringEINTRN(func() (int, error) { return unix.Eventfd(initval, flags) })
}

// Fsync flushes fd's data and metadata to the device: fsync(2).
func Fsync(fd int) error {
	return ignoringEINTR(func() error { return unix.Fsync(fd) })
}

// Fdatasync flushes fd's data, and the metadata needed to read it back,
// to the device: fdatasync(2).
func Fdatasync(fd int) error {
	return ignoringEINTR(func() error { return unix.Fdatasync(fd) })
}

// Syncfs writes every dirty inode of fd's filesystem and commits them,
// as sync(2) does for that one filesystem: syncfs(2). Since Linux 5.8 it
// reports the writeback errors of any file of the filesystem recorded
// since fd's last syncfs (or its open).
func Syncfs(fd int) error {
	return ignoringEINTR(func() error { return unix.Syncfs(fd) })
}

// WaitWriteback waits for the writeback of fd's pages already under way
// and returns the writeback errors recorded for fd's file since fd last
// saw them, as fsync would report them (its errseq cursor advances), but
// starts no writeback and flushes nothing: sync_file_range(2) with
// SYNC_FILE_RANGE_WAIT_BEFORE over the whole file.
func WaitWriteback(fd int) error {
	return ignoringEINTR(func() error { return unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE) })
}

// Fstat fills st with fd's status: fstat(2). A query of the times makes
// the file's next change take a fine-grained timestamp (Linux 6.13 on):
// for the size alone, use Statx with STATX_SIZE.
func Fstat(fd int, st *unix.Stat_t) error {
	return ignoringEINTR(func() error { return unix.Fstat(fd, st) })
}

// Statx fills stx with what mask asks of path relative to dirfd (with
// AT_EMPTY_PATH and "": of dirfd itself): statx(2). ENOSYS before
// Linux 4.11. stx.Mask says what the filesystem filled.
func Statx(dirfd int, path string, flags, mask int, stx *unix.Statx_t) error {
	return ignoringEINTR(func() error { return unix.Statx(dirfd, path, flags, mask, stx) })
}

// Fstatfs fills st with the status of fd's filesystem: fstatfs(2).
func Fstatfs(fd int, st *unix.Statfs_t) error {
	return ignoringEINTR(func() error { return unix.Fstatfs(fd, st) })
}

// Ftruncate sets fd's size to size: ftruncate(2).
func Ftruncate(fd int, size int64) error {
	return ignoringEINTR(func() error { return unix.Ftruncate(fd, size) })
}

// Fallocate allocates (or, with mode's flags, punches, zeroes, keeps the
// size of) [off, off+n) of fd: fallocate(2).
func Fallocate(fd int, mode uint32, off, n int64) error {
	return ignoringEINTR(func() error { return unix.Fallocate(fd, mode, off, n) })
}

// Fadvise gives the kernel advice (FADV_*) about [off, off+n) of fd
// (n == 0: to the end): posix_fadvise(2), as fadvise64.
func Fadvise(fd int, off, n int64, advice int) error {
	return ignoringEINTR(func() error { return unix.Fadvise(fd, off, n, advice) })
}

// Fcntl makes the fcntl(2) command cmd with the integer arg (F_GETFL,
// F_SETFL, F_DUPFD_CLOEXEC) and returns its result. Not for the commands
// that wait (F_SETLKW, F_OFD_SETLKW), whose EINTR means something.
func Fcntl(fd, cmd, arg int) (int, error) {
	return ignoringEINTRN(func() (int, error) { return unix.FcntlInt(uintptr(fd), cmd, arg) })
}

// Seek sets fd's offset from whence (io.SeekStart, io.SeekCurrent,
// io.SeekEnd, SEEK_DATA, SEEK_HOLE) and returns it: lseek(2).
func Seek(fd int, off int64, whence int) (int64, error) {
	return ignoringEINTRN(func() (int64, error) { return unix.Seek(fd, off, whence) })
}

// CopyFileRange copies up to n bytes from rfd at *roff to wfd at *woff
// inside the kernel, and advances both offsets by what it copied:
// copy_file_range(2). n may be short; 0 with a nil error is the end of
// rfd. EXDEV, EINVAL, EOPNOTSUPP, ENOSYS say the pair cannot be copied
// this way.
func CopyFileRange(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
	return ignoringEINTRN(func() (int, error) { return unix.CopyFileRange(rfd, roff, wfd, woff, n, flags) })
}

// Cachestat fills cs with how many of r's pages of fd the page cache
// holds (and how many are dirty, under writeback, evicted, recently
// evicted): cachestat(2), Linux 6.5 on (ENOSYS before). It never reads
// or waits.
func Cachestat(fd int, r *unix.CachestatRange, cs *unix.Cachestat_t) error {
	return ignoringEINTR(func() error { return unix.Cachestat(uint(fd), r, cs, 0) })
}

// Unlinkat removes path relative to dirfd (AT_FDCWD: the working
// directory); flags AT_REMOVEDIR removes a directory: unlinkat(2).
func Unlinkat(dirfd int, path string, flags int) error {
	return ignoringEINTR(func() error { return unix.Unlinkat(dirfd, path, flags) })
}

// Fstatat fills st with the status of path relative to dirfd
// (AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH in flags): newfstatat(2).
func Fstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	return ignoringEINTR(func() error { return unix.Fstatat(dirfd, path, st, flags) })
}

// Statfs fills st with the status of path's filesystem: statfs(2).
func Statfs(path string, st *unix.Statfs_t) error {
	return ignoringEINTR(func() error { return unix.Statfs(path, st) })
}

// Sysinfo fills info with the system's memory and swap figures:
// sysinfo(2).
func Sysinfo(info *unix.Sysinfo_t) error {
	return ignoringEINTR(func() error { return unix.Sysinfo(info) })
}

// Unlink removes path (relative to the working directory when not
// absolute): unlink(2), as unlinkat(AT_FDCWD, path, 0).
func Unlink(path string) error {
	return Unlinkat(unix.AT_FDCWD, path, 0)
}

// IoctlGetInt makes the ioctl(2) request req, which returns an int
// through its argument (BLKSSZGET, BLKPBSZGET, BLKIOMIN), on fd.
func IoctlGetInt(fd int, req uint) (int, error) {
	return ignoringEINTRN(func() (int, error) { return unix.IoctlGetInt(fd, req) })
}

// Stat fills st with the status of path, following symbolic links:
// stat(2). See Fstat about the times.
func Stat(path string, st *unix.Stat_t) error {
	return ignoringEINTR(func() error { return unix.Stat(path, st) })
}

// Access checks whether the calling process may access path as mode
// asks (F_OK: whether it exists): access(2), as faccessat(AT_FDCWD).
func Access(path string, mode uint32) error {
	return ignoringEINTR(func() error { return unix.Access(path, mode) })
}

// SyncFileRange starts or waits for write-back of [off, off+n) of fd
// as flags say (SYNC_FILE_RANGE_WRITE: start it): sync_file_range(2). It
// makes nothing durable: metadata and the device's cache are not flushed.
func SyncFileRange(fd int, off, n int64, flags int) error {
	return ignoringEINTR(func() error { return unix.SyncFileRange(fd, off, n, flags) })
}
