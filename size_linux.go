//go:build linux

package diskio

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Size tracking: the logical size, the size on disk with padding, the
// lock-free view readers use, and the operations that change or report
// the size (Stat, Truncate, Seek).

const viewPadded = 1 << 62 // in File.view: padding or writes outstanding

// publish makes size and settled() visible to lock-free readers; call it
// with f.mu held after any change. view is stored before viewGen, so a
// reader that sees the new generation also sees the new view.
func (f *File) publish() {
	v := f.size
	if !f.settled() {
		v |= viewPadded
	}
	f.view.Store(v)
	f.viewGen.Store(f.gen)
}

// changed records a change of size, disk or writing (f.mu held).
func (f *File) changed() {
	f.gen++
	f.publish()
}

// size: no padding of ours is outstanding and no write of ours is in
// flight (it may have padded already without having told us).
func (f *File) settled() bool { return f.disk == f.size && f.writing == 0 }

// sizeNow returns the logical size. Without padding of our own outstanding
// it asks the kernel, since other descriptors may have changed the size;
// with padding outstanding (between an unaligned O_DIRECT write that grew
// the file and the next Sync or Close) our record is the truth and other
// descriptors' changes to the size are not seen.
func (f *File) sizeNow() (int64, error) {
	f.mu.Lock()
	if !f.settled() {
		defer f.mu.Unlock()
		return f.size, nil
	}
	gen := f.gen
	f.mu.Unlock()
	var st unix.Stat_t
	if err := unix.Fstat(f.fd, &st); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// Believe the kernel only if nothing of ours changed the file while
	// it answered (a write, a truncate, a trim of padding).
	if f.settled() && f.gen == gen {
		f.size, f.disk = st.Size, st.Size
		f.publish()
	}
	return f.size, nil
}

// Seek sets the cursor for the next Read or Write, like os.File.Seek
// (io.SeekEnd is relative to the logical size).
func (f *File) Seek(offset int64, whence int) (int64, error) {
	if p, ok := f.plainPath(); ok {
		return p.Seek(offset, whence)
	}
	if err := f.acquire("seek"); err != nil {
		return 0, err
	}
	defer f.release()
	f.posMu.Lock()
	defer f.posMu.Unlock()
	var size int64
	if whence == io.SeekEnd || whence == unix.SEEK_DATA || whence == unix.SEEK_HOLE {
		var err error
		if size, err = f.sizeNow(); err != nil {
			return 0, f.pathErr("seek", err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.pos
	case io.SeekEnd:
		base = size
	case unix.SEEK_DATA, unix.SEEK_HOLE:
		// The kernel knows the file's extents; past our logical size
		// it answers like at end of file.
		pos, err := unix.Seek(f.fd, offset, whence)
		if err == nil && pos > size && whence == unix.SEEK_HOLE {
			pos = size
		}
		if err != nil {
			return 0, &fs.PathError{Op: "seek", Path: f.name, Err: err}
		}
		f.pos = pos
		return pos, nil
	default:
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	if base+offset < 0 {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	// The kernel decides what offsets the filesystem allows (ext4 refuses
	// past 16 TiB): ask it with the absolute target.
	if _, err := unix.Seek(f.fd, base+offset, io.SeekStart); err != nil {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: err}
	}
	f.pos = base + offset
	return f.pos, nil
}

// Stat returns the file's FileInfo; Size is the exact logical size.
func (f *File) Stat() (fs.FileInfo, error) {
	if p, ok := f.plainPath(); ok {
		return p.Stat()
	}
	if err := f.acquire("stat"); err != nil {
		return nil, err
	}
	defer f.release()
	f.mu.Lock()
	gen := f.gen
	f.mu.Unlock()
	fi, err := f.osf.Stat()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.settled() && f.gen == gen {
		// No padding of ours: the kernel's size is the truth.
		f.size, f.disk = fi.Size(), fi.Size()
		f.publish()
		return fi, nil
	}
	return withSize(fi, f.size), nil
}

type fileInfo struct {
	fs.FileInfo
	size int64
}

func (fi fileInfo) Size() int64 { return fi.size }

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
	if f.acc == os.O_RDONLY {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	f.locks.lock(0, maxOffset)
	defer f.locks.unlock(0, maxOffset)
	if err := ignoringEINTR(func() error { return unix.Ftruncate(f.fd, size) }); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	f.mu.Lock()
	f.size, f.disk = size, size
	f.changed()
	f.mu.Unlock()
	return nil
}

const maxOffset = 1<<63 - 1

// trimPadding cuts the zeros a padded O_DIRECT write left past the logical
// size, so that the file's size on disk is exact.
func (f *File) trimPadding() error {
	f.locks.lock(0, maxOffset)
	defer f.locks.unlock(0, maxOffset)
	f.mu.Lock()
	size, disk := f.size, f.disk
	f.mu.Unlock()
	if disk == size {
		return nil
	}
	if err := ignoringEINTR(func() error { return unix.Ftruncate(f.fd, size) }); err != nil {
		return err
	}
	f.mu.Lock()
	f.disk = size
	f.changed()
	f.mu.Unlock()
	return nil
}
