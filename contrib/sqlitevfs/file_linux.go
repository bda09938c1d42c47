//go:build linux

package sqlitevfs

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/vfs"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/sys"
)

// file is a database, journal or WAL file: a diskio File, SQLite's lock
// state on it, and the WAL-index of a database.
//
// SQLite calls a file's methods from one connection at a time, so the
// fields below need no lock; the diskio File is safe for concurrent use
// anyway.
type file struct {
	vfs   *VFS
	f     *diskio.File
	fd    int // f.Fd(): its own open file description, which the OFD locks are on
	name  string
	flags vfs.OpenFlag
	lock  vfs.LockLevel
	shm   vfs.SharedMemory // nil but for main databases

	direct  bool // O_DIRECT (diskio's File.Direct)
	psow    bool // powersafe overwrite (SQLITE_FCNTL_POWERSAFE_OVERWRITE, "psow" URI parameter)
	keepWAL bool // SQLITE_FCNTL_PERSIST_WAL
	syncDir bool // a new journal or WAL: its directory is synced at its first sync
	closed  bool

	// A direct file's requests smaller than unit (partpage_linux.go).
	unit        int          // the smallest request a direct file sends O_DIRECT (directUnit)
	part        *diskio.File // the same file through the page cache, opened at the first such request
	partWrote   bool         // part has written since the last sync
	directWrote bool         // f has written, truncated or grown since the last sync
	syncErr     error        // a failed sync of part: every later sync returns it

	// A WAL's small writes held back to go with the next (walwrite_linux.go).
	wal     bool   // a WAL file
	held    []byte // bytes written by SQLite, not yet by the kernel
	heldOff int64  // where they go
	joined  []byte // held bytes and the write after them, as one
}

var (
	_ vfs.FileLockState          = (*file)(nil)
	_ vfs.FileHasMoved           = (*file)(nil)
	_ vfs.FileSizeHint           = (*file)(nil)
	_ vfs.FilePersistWAL         = (*file)(nil)
	_ vfs.FilePowersafeOverwrite = (*file)(nil)
	_ vfs.FileSharedMemory       = (*file)(nil)
)

// Close releases the file's locks (closing its descriptor does, too) and
// its WAL-index mapping, and closes the diskio File.
func (f *file) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	held := f.flushHeld()
	if f.shm != nil {
		f.shm.Close()
	}
	f.Unlock(vfs.LOCK_NONE)
	var perr error
	if f.part != nil {
		perr = f.part.Close()
	}
	if err := f.f.Close(); err != nil {
		return vfs.SystemError(err, sqlite3.IOERR_CLOSE)
	}
	if perr != nil {
		return vfs.SystemError(perr, sqlite3.IOERR_CLOSE)
	}
	return held
}

// ReadAt reads len(p) bytes at off: at end of file it returns fewer with
// io.EOF, which SQLite takes as SQLITE_IOERR_SHORT_READ (and zero-fills
// the rest). An I/O error is SQLITE_IOERR_CORRUPTFS for EIO, ERANGE and
// ENXIO, as in SQLite's unix VFS, and SQLITE_IOERR_READ otherwise.
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if err := f.flushHeld(); err != nil {
		return 0, err
	}
	df, err := f.fileFor(p, off)
	if err != nil {
		return 0, vfs.SystemError(err, sqlite3.IOERR_READ)
	}
	n, err := df.ReadAt(p, off)
	if err == nil || err == io.EOF {
		return n, err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) && (errno == unix.EIO || errno == unix.ERANGE || errno == unix.ENXIO) {
		return n, vfs.SystemError(err, sqlite3.IOERR_CORRUPTFS)
	}
	return n, vfs.SystemError(err, sqlite3.IOERR_READ)
}

// WriteAt writes p at off. A full disk (ENOSPC) is SQLITE_FULL, any other
// failure SQLITE_IOERR_WRITE. A WAL's frame header is written together
// with its page (walwrite_linux.go).
func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if len(f.held) > 0 && off != f.heldEnd() {
		if err := f.flushHeld(); err != nil {
			return 0, err
		}
	}
	if f.hold(p, off) {
		return len(p), nil
	}
	var n int
	var err error
	if len(f.held) > 0 {
		n, err = f.writeJoined(p)
	} else {
		var df *diskio.File
		if df, err = f.fileFor(p, off); err == nil {
			f.wrote(df)
			n, err = df.WriteAt(p, off)
		}
	}
	return n, writeError(err)
}

// writeError maps a failed write as SQLite's unix VFS does: a full disk
// (ENOSPC) is SQLITE_FULL, anything else SQLITE_IOERR_WRITE.
func writeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC):
		return vfs.SystemError(err, sqlite3.FULL)
	}
	return vfs.SystemError(err, sqlite3.IOERR_WRITE)
}

// Truncate sets the file's size.
func (f *file) Truncate(size int64) error {
	if err := f.flushHeld(); err != nil {
		return err
	}
	f.directWrote = true
	if err := f.f.Truncate(size); err != nil {
		return vfs.SystemError(err, sqlite3.IOERR_TRUNCATE)
	}
	return nil
}

// Sync makes the file durable through the scheduler, which flushes
// concurrent syncs of one file together (group commit):
//
//   - SQLITE_SYNC_DATAONLY, and SQLITE_SYNC_NORMAL (every sync at SQLite's
//     default settings): File.Datasync, fdatasync(2). It covers the data
//     and the size, which is all SQLite needs; SQLite's unix VFS issues
//     fdatasync on Linux for every sync.
//   - SQLITE_SYNC_FULL without DATAONLY (PRAGMA fullfsync or
//     checkpoint_fullfsync): File.Sync, fsync(2), the fullest flush there
//     is (on macOS SQLite would use F_FULLFSYNC).
//
// The first sync of a journal or WAL the connection created also syncs
// its directory, so that the new name survives a crash (SQLite's unix VFS
// does the same). A direct file whose small requests went through the
// page cache syncs that way (partpage_linux.go).
func (f *file) Sync(flags vfs.SyncFlag) error {
	if err := f.flushHeld(); err != nil {
		return err
	}
	full := flags&vfs.SYNC_DATAONLY == 0 && flags&0x0f == vfs.SYNC_FULL
	if err := f.syncFiles(full); err != nil {
		return vfs.SystemError(err, sqlite3.IOERR_FSYNC)
	}
	if f.syncDir {
		f.syncDir = false
		return f.vfs.syncDir(filepath.Dir(f.name))
	}
	return nil
}

// Size returns the file's size as the kernel has it (other connections
// and processes change it): diskio never writes past what it was given,
// so the kernel's end of file is the logical size in both modes.
//
// SQLite asks at every transaction, from every connection, so the call is
// lseek(SEEK_END) made without telling the Go runtime (a raw system call):
// on a regular file it reads the inode's size under no lock that sleeps
// (the descriptor's position lock is taken only while another system call
// uses the same descriptor's position, which nothing does here: diskio
// reads and writes at offsets). An ordinary system call there would let
// the runtime hand the goroutine's P to a new thread whenever the caller
// is descheduled mid-call, as os.File's does: 64 readers of a database in
// the page cache peaked at 12 OS threads so.
func (f *file) Size() (int64, error) {
	if err := f.flushHeld(); err != nil {
		return 0, err
	}
	for {
		n, _, errno := syscall.RawSyscall(unix.SYS_LSEEK, uintptr(f.fd), 0, io.SeekEnd)
		switch errno {
		case 0:
			return int64(n), nil
		case unix.EINTR:
			continue
		}
		return 0, vfs.SystemError(&fs.PathError{Op: "seek", Path: f.name, Err: errno}, sqlite3.IOERR_FSTAT)
	}
}

// SizeHint grows the file to size with fallocate, as ncruces' default
// VFS does, so that the pages written next have their blocks.
func (f *file) SizeHint(size int64) error {
	cur, err := f.Size()
	if err != nil || size <= cur {
		return err
	}
	f.directWrote = true
	err = f.f.Preallocate(cur, size-cur)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		err = f.f.Truncate(size)
	}
	if errors.Is(err, syscall.ENOSPC) {
		return vfs.SystemError(err, sqlite3.FULL)
	}
	return err
}

// SectorSize is the smallest write that cannot change bytes around it:
// 4096, a page of the page cache, which the kernel writes whole (SQLite's
// unix VFS says 4096 too); for an O_DIRECT file, the larger of that and
// its direct-I/O block (diskio's File.Alignment).
func (f *file) SectorSize() int {
	const pageCachePage = 4096
	if f.direct {
		return max(pageCachePage, f.f.Alignment())
	}
	return pageCachePage
}

// DeviceCharacteristics says what SQLite may assume of the file:
//
//   - SQLITE_IOCAP_POWERSAFE_OVERWRITE (unless turned off with the "psow"
//     URI parameter or the file control): a write changes no byte outside
//     its range, even across a power cut. diskio never writes a byte it
//     was not given (its O_DIRECT writes are whole blocks of the caller's
//     bytes; partial blocks go through the page cache), so this holds in
//     both modes as far as the device honours it, as for SQLite's unix VFS.
//   - SQLITE_IOCAP_SUBPAGE_READ: reads of less than a page are fine (SQLite
//     reads overflow pages' headers so). On an O_DIRECT file such a read
//     goes through the page cache (partpage_linux.go).
func (f *file) DeviceCharacteristics() vfs.DeviceCharacteristic {
	c := vfs.IOCAP_SUBPAGE_READ
	if f.psow {
		c |= vfs.IOCAP_POWERSAFE_OVERWRITE
	}
	return c
}

// HasMoved reports whether the file's name now names another file (or
// none): SQLITE_FCNTL_HAS_MOVED.
func (f *file) HasMoved() (bool, error) {
	var open, named unix.Statx_t
	if err := sys.Statx(f.fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO, &open); err != nil {
		return false, vfs.SystemError(&fs.PathError{Op: "statx", Path: f.name, Err: err}, sqlite3.IOERR_FSTAT)
	}
	err := sys.Statx(unix.AT_FDCWD, f.name, 0, unix.STATX_INO, &named)
	if err == unix.ENOENT {
		return true, nil
	}
	if err != nil {
		return false, vfs.SystemError(&fs.PathError{Op: "statx", Path: f.name, Err: err}, sqlite3.IOERR_FSTAT)
	}
	return open.Ino != named.Ino || open.Dev_major != named.Dev_major || open.Dev_minor != named.Dev_minor, nil
}

func (f *file) SharedMemory() vfs.SharedMemory { return f.shm }
func (f *file) LockState() vfs.LockLevel       { return f.lock }
func (f *file) PowersafeOverwrite() bool       { return f.psow }
func (f *file) SetPowersafeOverwrite(b bool)   { f.psow = b }
func (f *file) PersistWAL() bool               { return f.keepWAL }
func (f *file) SetPersistWAL(b bool)           { f.keepWAL = b }
