//go:build linux

package pebblevfs

import (
	"errors"
	"io"
	"io/fs"
	"unsafe"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/sys"
)

// readFile is a diskio File as a vfs.File: Pebble's random block reads,
// and any file that diskio opened buffered because the filesystem refused
// O_DIRECT.
type readFile struct {
	f     *diskio.File
	dev   vfs.DeviceID
	fresh *freshFile  // what the FS's fresh cache holds of the file, or nil
	cache *freshCache // the FS's fresh cache, told of reads, or nil
}

var _ vfs.File = (*readFile)(nil)

func (r *readFile) Read(p []byte) (int, error)               { return r.f.Read(p) }
func (r *readFile) Write(p []byte) (int, error)              { return r.f.Write(p) }
func (r *readFile) WriteAt(p []byte, off int64) (int, error) { return r.f.WriteAt(p, off) }
func (r *readFile) Sync() error                              { return r.f.Sync() }
func (r *readFile) SyncData() error                          { return r.f.Datasync() }
func (r *readFile) Fd() uintptr                              { return r.f.Fd() }
func (r *readFile) Preallocate(off, n int64) error           { return preallocate(r.f, off, n) }
func (r *readFile) Close() error                             { return r.f.Close() }

// ReadAt reads from the fresh cache what it holds, the rest from the file.
func (r *readFile) ReadAt(p []byte, off int64) (int, error) {
	n, fresh, ghost, err := readFresh(r.fresh, p, off, r.f.ReadAt)
	if ghost {
		r.cache.servedBytes(n - fresh)
	} else {
		r.cache.missedRandom(n - fresh)
	}
	return n, err
}

func (r *readFile) SyncTo(length int64) (fullSync bool, err error) {
	// Start write-back of [0, length) as vfs.Default does, so dirty pages
	// (a page-cache file's, or a direct file's partial blocks) do not pile
	// up until the final sync. Without
	// Default's SYNC_FILE_RANGE_WAIT_BEFORE: waiting for earlier write-back
	// would hold the caller's thread on the disk.
	err = sys.SyncFileRange(int(r.f.Fd()), 0, length, unix.SYNC_FILE_RANGE_WRITE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return true, r.f.Datasync()
	}
	if err != nil {
		return false, &fs.PathError{Op: "sync_file_range", Path: r.f.Name(), Err: err}
	}
	return false, nil
}

// Prefetch starts reading [off, off+n) into the page cache (readahead(2),
// through diskio's File.Prefetch). Pebble calls it ahead of an iterator
// reading blocks in order. On a direct file it does nothing: O_DIRECT
// reads bypass the page cache. (Reading the range into memory of our own,
// shared by the FS's files, doubles the bytes YCSB E reads and cuts its
// throughput; see docs/2026-11-25-history.md.)
func (r *readFile) Prefetch(off, n int64) error { return r.f.Prefetch(off, n) }

func (r *readFile) Stat() (vfs.FileInfo, error) {
	fi, err := r.f.Stat()
	if err != nil {
		return nil, err
	}
	return fileInfo{fi, r.dev}, nil
}

// preallocate reserves [off, off+n) without changing the size, like
// Pebble's vfs.Default (File.Preallocate would grow the file, and move
// where Pebble looks for an sstable's footer).
func preallocate(f *diskio.File, off, n int64) error {
	err := f.PreallocateKeepSize(off, n)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return nil // optional: "implementations may choose to do nothing"
	}
	return err
}

// alignedBuf returns n bytes whose address is a multiple of align. The Go
// heap does not move objects, and the scheduler keeps a request's buffer
// referenced until its completion.
func alignedBuf(n, align int) []byte {
	b := make([]byte, n+align)
	skip := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) % uintptr(align)); r != 0 {
		skip = align - r
	}
	return b[skip : skip+n : skip+n]
}

// readFull reads into p at off until p is full or the file ends.
func readFull(f *diskio.File, p []byte, off int64) (int, error) {
	n, err := f.ReadAt(p, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}
