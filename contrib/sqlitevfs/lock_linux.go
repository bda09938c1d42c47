//go:build linux

package sqlitevfs

import (
	"syscall"
	"unsafe"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/vfs"
	"golang.org/x/sys/unix"
)

// SQLite's database locks are byte-range locks on the database file at
// these offsets (os.h), the same bytes for every VFS on every system, so
// that processes using different VFSes exclude each other: a reader holds
// a read lock on the SHARED range, a writer about to write holds the
// RESERVED byte, a writer waiting for readers to leave holds the PENDING
// byte (which turns new readers away), and a writer writing holds a write
// lock on the whole SHARED range.
//
// The locks are open file description (OFD) locks, as ncruces' default
// VFS takes them (Linux 3.15): they belong to the descriptor's open file
// description, so two connections of one process exclude each other
// (POSIX fcntl locks, which SQLite's C VFS uses, belong to the process and
// need SQLite's inode table to work around that), and they conflict with
// POSIX locks on the same bytes, so a process using SQLite's C library
// excludes us too.
const (
	pendingByte  = 0x40000000
	reservedByte = pendingByte + 1
	sharedFirst  = pendingByte + 2
	sharedSize   = 510
)

// Lock raises the file's lock to SHARED, RESERVED or EXCLUSIVE (SQLite's
// xLock), taking the byte-range locks above without waiting for them; a
// lock another connection holds is SQLITE_BUSY, and SQLite's busy handler
// decides whether to try again. EXCLUSIVE first takes PENDING, and keeps
// it when the readers are not gone yet, so that no new one comes.
func (f *file) Lock(lock vfs.LockLevel) error {
	if f.lock >= lock {
		return nil
	}
	// No write lock on a read-only database.
	if lock >= vfs.LOCK_RESERVED && f.flags&vfs.OPEN_READONLY != 0 {
		return sqlite3.IOERR_LOCK
	}
	switch lock {
	case vfs.LOCK_SHARED:
		if f.lock != vfs.LOCK_NONE {
			return sqlite3.IOERR_LOCK
		}
		// A writer waiting for the readers to leave holds PENDING: let
		// it go first.
		held, err := f.testLock(pendingByte, 1, sqlite3.ExtendedErrorCode(sqlite3.IOERR))
		if err != nil {
			return err
		}
		if held {
			return sqlite3.BUSY
		}
		if err := f.setLock(unix.F_RDLCK, sharedFirst, sharedSize, false, sqlite3.IOERR_RDLOCK); err != nil {
			return err
		}
		f.lock = vfs.LOCK_SHARED
		return nil

	case vfs.LOCK_RESERVED:
		if f.lock != vfs.LOCK_SHARED {
			return sqlite3.IOERR_LOCK
		}
		if err := f.setLock(unix.F_WRLCK, reservedByte, 1, false, sqlite3.IOERR_LOCK); err != nil {
			return err
		}
		f.lock = vfs.LOCK_RESERVED
		return nil

	case vfs.LOCK_EXCLUSIVE:
		if f.lock == vfs.LOCK_NONE {
			return sqlite3.IOERR_LOCK
		}
		if f.lock == vfs.LOCK_RESERVED {
			// PENDING is only ever held for a moment by another
			// process's reader (SQLite's C VFS read-locks it while it
			// takes SHARED), so wait for it.
			if err := f.setLock(unix.F_WRLCK, pendingByte, 1, true, sqlite3.IOERR_LOCK); err != nil {
				return err
			}
			f.lock = vfs.LOCK_PENDING
		}
		if err := f.setLock(unix.F_WRLCK, sharedFirst, sharedSize, false, sqlite3.IOERR_LOCK); err != nil {
			return err
		}
		f.lock = vfs.LOCK_EXCLUSIVE
		return nil
	}
	return sqlite3.IOERR_LOCK
}

// Unlock lowers the file's lock to SHARED or NONE (SQLite's xUnlock).
func (f *file) Unlock(lock vfs.LockLevel) error {
	if f.lock <= lock {
		return nil
	}
	switch lock {
	case vfs.LOCK_SHARED:
		if f.lock >= vfs.LOCK_EXCLUSIVE {
			// The write lock on the SHARED range becomes a read lock,
			// atomically: no writer can come in between.
			if err := f.setLock(unix.F_RDLCK, sharedFirst, sharedSize, false, sqlite3.IOERR_RDLOCK); err != nil {
				return sqlite3.IOERR_RDLOCK
			}
		}
		err := f.unlock(pendingByte, 2) // PENDING and RESERVED
		f.lock = vfs.LOCK_SHARED
		return err
	case vfs.LOCK_NONE:
		err := f.unlock(0, 0) // everything
		f.lock = vfs.LOCK_NONE
		return err
	}
	return sqlite3.IOERR_UNLOCK
}

// CheckReservedLock reports whether some connection holds RESERVED or
// more (SQLite's xCheckReservedLock, asked before it plays back a hot
// journal).
func (f *file) CheckReservedLock() (bool, error) {
	if f.lock >= vfs.LOCK_RESERVED {
		return true, nil
	}
	return f.testLock(reservedByte, 1, sqlite3.IOERR_CHECKRESERVEDLOCK)
}

// testLock reports whether another open file description holds a write
// lock on [start, start+n) (F_OFD_GETLK of a write lock).
func (f *file) testLock(start, n int64, code sqlite3.ExtendedErrorCode) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Start: start, Len: n}
	for {
		err := fcntlLock(f.fd, unix.F_OFD_GETLK, &lk)
		if err == nil {
			return lk.Type == unix.F_WRLCK, nil
		}
		if err != unix.EINTR {
			return false, vfs.SystemError(err, code)
		}
	}
}

// setLock takes a read or write lock on [start, start+n): F_OFD_SETLK,
// or F_OFD_SETLKW when wait. A lock held by another open file description
// is SQLITE_BUSY, as are the other errors SQLite's unix VFS maps to it.
func (f *file) setLock(typ int16, start, n int64, wait bool, code sqlite3.ExtendedErrorCode) error {
	lk := unix.Flock_t{Type: typ, Start: start, Len: n}
	cmd := unix.F_OFD_SETLK
	if wait {
		cmd = unix.F_OFD_SETLKW
	}
	for {
		err := fcntlLock(f.fd, cmd, &lk)
		if err == unix.EINTR && wait {
			continue
		}
		return lockError(err, code)
	}
}

// unlock drops the locks on [start, start+n) (n == 0: to the end).
func (f *file) unlock(start, n int64) error {
	lk := unix.Flock_t{Type: unix.F_UNLCK, Start: start, Len: n}
	for {
		err := fcntlLock(f.fd, unix.F_OFD_SETLK, &lk)
		if err == nil {
			return nil
		}
		if err != unix.EINTR {
			return vfs.SystemError(err, sqlite3.IOERR_UNLOCK)
		}
	}
}

// fcntlLock is fcntl(fd, cmd, lk) for a lock command. F_OFD_SETLK and
// F_OFD_GETLK never sleep (a held lock is EAGAIN, not a wait), so on a
// 64-bit system, where fcntl takes the 64-bit flock as it is, they are
// raw system calls, which the Go runtime does not hand off to another
// thread: SQLite takes and drops these locks at every transaction of
// every connection, and ordinary system calls made there let the runtime
// start a thread whenever a caller is descheduled mid-call. F_OFD_SETLKW
// waits for another holder, so it is an ordinary system call, as are all
// of them on 32-bit systems (fcntl64).
func fcntlLock(fd int, cmd int, lk *unix.Flock_t) error {
	if cmd == unix.F_OFD_SETLKW || unsafe.Sizeof(uintptr(0)) != 8 {
		return unix.FcntlFlock(uintptr(fd), cmd, lk)
	}
	_, _, errno := syscall.RawSyscall(unix.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(unsafe.Pointer(lk)))
	if errno != 0 {
		return errno
	}
	return nil
}

// lockError is SQLite's sqliteErrorFromPosixError for lock calls: a lock
// someone else holds (or an interrupted attempt) is SQLITE_BUSY, EPERM is
// SQLITE_PERM, anything else the given I/O error.
func lockError(err error, code sqlite3.ExtendedErrorCode) error {
	switch err {
	case nil:
		return nil
	case unix.EACCES, unix.EAGAIN, unix.EBUSY, unix.EINTR, unix.ENOLCK, unix.EDEADLK, unix.ETIMEDOUT:
		return sqlite3.BUSY
	case unix.EPERM:
		return vfs.SystemError(err, sqlite3.PERM)
	}
	return vfs.SystemError(err, code)
}
