//go:build linux

package diskio

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// Size: the operations that change or report it (Stat, Truncate, Seek).

// sizeNow returns the file's size: the kernel's. The File never writes a
// byte past what it was given (write_linux.go), so the kernel's size is
// the logical size at every moment, changes through other descriptors
// included.
func (f *File) sizeNow() (int64, error) { return sizeOf(f.dataFd) }

// sizeOf asks the kernel for fd's size alone (statOf). Not fstat: since
// Linux 6.13 a query of a file's change or modification time makes the
// file's next change take a fine-grained timestamp, which on ext4 dirties
// the inode in the journal at every write (an appender that asked after
// each write paid for it in every durable append; docs/design.md).
func sizeOf(fd int) (int64, error) {
	st, err := statOf(fd)
	return st.size, err
}

// statOf asks the kernel for fd's size and allocated blocks, and no
// timestamps (statx; fstat before Linux 4.11).
func statOf(fd int) (fileStamp, error) {
	const mask = unix.STATX_SIZE | unix.STATX_BLOCKS
	var stx unix.Statx_t
	err := sys.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_SYNC_AS_STAT, mask, &stx)
	if err == nil && stx.Mask&mask == mask {
		return fileStamp{ok: true, size: int64(stx.Size), blocks: int64(stx.Blocks)}, nil
	}
	if err != nil && err != unix.ENOSYS {
		return fileStamp{}, err
	}
	var st unix.Stat_t
	if err := sys.Fstat(fd, &st); err != nil {
		return fileStamp{}, err
	}
	return fileStamp{ok: true, size: st.Size, blocks: st.Blocks}, nil
}

// Seek sets the cursor for the next Read or Write, like os.File.Seek:
// one lseek, which checks the offset as the filesystem allows it (ext4
// refuses past 16 TiB) and, for io.SeekEnd, SEEK_DATA and SEEK_HOLE,
// gives the kernel's answer. The kernel's size is the logical size (the
// File never writes past what it was given).
func (f *File) Seek(offset int64, whence int) (int64, error) {
	if p, ok := f.plainPath(); ok {
		return p.Seek(offset, whence)
	}
	if err := f.acquire("seek"); err != nil {
		return 0, err
	}
	defer f.release()
	f.cur.mu.Lock()
	defer f.cur.mu.Unlock()
	if f.kind.Load() == kindOther {
		return f.seekOther(offset, whence)
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		if f.cur.pos.Load()+offset < 0 {
			return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
		}
		offset, whence = f.cur.pos.Load()+offset, io.SeekStart
	case io.SeekEnd, unix.SEEK_DATA, unix.SEEK_HOLE:
	default:
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	pos, err := sys.Seek(f.dataFd, offset, whence)
	if err != nil {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: err}
	}
	f.cur.pos.Store(pos)
	return pos, nil
}

// Stat returns the file's FileInfo; Size is the exact size.
func (f *File) Stat() (fs.FileInfo, error) {
	if p, ok := f.plainPath(); ok {
		return p.Stat()
	}
	if err := f.acquire("stat"); err != nil {
		return nil, err
	}
	defer f.release()
	return f.osf.Stat()
}

// Truncate changes the size of the file, like os.File.Truncate.
func (f *File) Truncate(size int64) error {
	if p, ok := f.plainPath(); ok {
		return p.Truncate(size)
	}
	if err := f.acquire("truncate"); err != nil {
		return err
	}
	defer f.release()
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	if f.access == os.O_RDONLY {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	if err := f.truncate(size); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	return nil
}

// truncate is Truncate for a caller that holds a reference and checked
// its arguments (ReadFrom cutting back its preallocation, too).
func (f *File) truncate(size int64) error {
	err := sys.Ftruncate(f.dataFd, size)
	f.dur.changed()
	if err == nil {
		f.cache.sizeHint.Store(size)
	}
	return err
}

const maxOffset = 1<<63 - 1
