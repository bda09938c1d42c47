package raftwal

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hashicorp/raft-wal/types"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// VFS is raft-wal's types.VFS on diskio. It is safe for concurrent use.
type VFS struct {
	opts  Options
	fopts []diskio.Option

	schedOnce sync.Once
	sched     *sched.Scheduler // nil: removals and directory syncs are the os package's
}

var _ types.VFS = (*VFS)(nil)

// New returns a VFS with the given options.
func New(opts Options) *VFS {
	return &VFS{opts: opts, fopts: opts.fileOptions()}
}

// Mode returns the mode the VFS opens segment files in.
func (v *VFS) Mode() Mode { return v.opts.Mode }

// scheduler returns the scheduler the VFS's files use, or nil where there
// is none.
func (v *VFS) scheduler() *sched.Scheduler {
	v.schedOnce.Do(func() {
		v.sched, _ = diskio.SchedulerOf(v.fopts...)
	})
	return v.sched
}

// ListDir returns the names of the files (not directories) in dir, sorted.
// It fails if dir cannot be read, as raft-wal's fs.FS.ListDir does.
func (v *VFS) ListDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		names = append(names, e.Name())
	}
	return names, nil
}

// Create creates the file dir/name, failing if it exists (O_EXCL), and
// when size is not zero allocates size bytes of disk for it (fallocate,
// growing the file to size; truncating it to size where the filesystem
// has no fallocate), as raft-wal's fs.FS.Create does. The file is not
// synced, nor its directory: the returned file's first Sync syncs both,
// so that a crash after a commit cannot lose the file's name.
func (v *VFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	if size > math.MaxInt32 {
		return nil, fmt.Errorf("maximum file size is %d bytes", math.MaxInt32)
	}
	path := filepath.Join(dir, name)
	f, err := diskio.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644, v.fopts...)
	if err != nil {
		return nil, err
	}
	if size > 0 {
		if err := f.Preallocate(0, int64(size)); err != nil {
			if !errors.Is(err, syscall.EOPNOTSUPP) {
				f.Close()
				return nil, err
			}
			if err := f.Truncate(int64(size)); err != nil {
				f.Close()
				return nil, err
			}
		}
	}
	w := &writableFile{File: f, vfs: v, dir: dir}
	w.tail.init(v.opts.tailCache())
	return w, nil
}

// Delete removes dir/name and syncs dir, as raft-wal's fs.FS.Delete does;
// both go through the scheduler (unlink can wait for the disk while it
// frees a segment's blocks).
func (v *VFS) Delete(dir, name string) error {
	if err := v.remove(filepath.Join(dir, name)); err != nil {
		return err
	}
	return v.syncDir(dir)
}

// OpenReader opens dir/name read-only.
func (v *VFS) OpenReader(dir, name string) (types.ReadableFile, error) {
	f, err := diskio.OpenFile(filepath.Join(dir, name), os.O_RDONLY, 0o644, v.fopts...)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// OpenWriter opens dir/name for reading and writing. Its Sync syncs the
// file only: a file that exists already has its name in its directory (as
// with raft-wal's fs.FS.OpenWriter).
func (v *VFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := diskio.OpenFile(filepath.Join(dir, name), os.O_RDWR, 0o644, v.fopts...)
	if err != nil {
		return nil, err
	}
	w := &writableFile{File: f, vfs: v, dir: dir}
	w.dirSynced.Store(true)
	w.tail.init(v.opts.tailCache())
	return w, nil
}

// writableFile is a segment open for writing. Its first Sync after Create
// also syncs the directory.
type writableFile struct {
	*diskio.File
	vfs       *VFS
	dir       string
	dirSynced atomic.Bool
	tail      tailCache
}

// WriteAt writes p at off, and keeps it in the tail cache if there is one.
func (w *writableFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := w.File.WriteAt(p, off)
	if w.tail.enabled() {
		if err != nil || n != len(p) {
			w.tail.drop()
		} else {
			w.tail.wrote(p, off)
		}
	}
	return n, err
}

// ReadAt reads from the tail cache where it holds all of [off, off+len(p)),
// else from the file.
func (w *writableFile) ReadAt(p []byte, off int64) (int, error) {
	if w.tail.enabled() && w.tail.read(p, off) {
		return len(p), nil
	}
	return w.File.ReadAt(p, off)
}

// Sync makes the file's data and size durable (fsync, as raft-wal's
// fs.File.Sync); the first Sync of a file Create made syncs its directory
// too.
func (w *writableFile) Sync() error {
	if err := w.File.Sync(); err != nil {
		return err
	}
	if !w.dirSynced.Load() {
		if err := w.vfs.syncDir(w.dir); err != nil {
			return err
		}
		w.dirSynced.Store(true)
	}
	return nil
}

// Close closes the file and lets the tail cache go.
func (w *writableFile) Close() error {
	err := w.File.Close()
	w.tail.drop()
	return err
}

// tailCache keeps a copy of the last bytes written to a file: raft reads
// back the entries it appended (to replicate them, to apply them) right
// after the commit, and in direct mode each such read would be a disk read.
// The window is one range of the file, [off, off+len(buf)), which grows as
// writes continue it and slides forward past max bytes; a write elsewhere
// starts a new window. Writers update it after their write to the file
// succeeded, so a read that starts after a WriteAt returned sees its bytes,
// as with the file itself.
type tailCache struct {
	max int // 0: no cache

	mu  sync.RWMutex
	off int64
	buf []byte
}

func (t *tailCache) init(max int) { t.max = max }

func (t *tailCache) enabled() bool { return t.max > 0 }

func (t *tailCache) drop() {
	t.mu.Lock()
	t.buf = nil
	t.off = 0
	t.mu.Unlock()
}

func (t *tailCache) wrote(p []byte, off int64) {
	if len(p) == 0 {
		return
	}
	if len(p) > t.max { // only the last max bytes of p
		off += int64(len(p) - t.max)
		p = p[len(p)-t.max:]
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf == nil {
		t.buf = make([]byte, 0, 2*t.max)
	}
	if len(t.buf) == 0 || off < t.off || off > t.off+int64(len(t.buf)) {
		// Neither inside nor continuing the window: start a new one.
		t.off = off
		t.buf = append(t.buf[:0], p...)
		return
	}
	at := int(off - t.off)
	if at+len(p) > cap(t.buf) {
		// Slide forward: keep the max-len(p) bytes before off, then p.
		// Sliding once per max bytes written copies each byte once.
		from := max(0, at-(t.max-len(p)))
		n := copy(t.buf, t.buf[from:at])
		t.off += int64(from)
		t.buf = t.buf[:n]
		at = n
	}
	if need := at + len(p); need > len(t.buf) {
		t.buf = t.buf[:need]
	}
	copy(t.buf[at:], p)
}

// read copies [off, off+len(p)) into p if the window holds all of it.
func (t *tailCache) read(p []byte, off int64) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.buf) == 0 || off < t.off || off+int64(len(p)) > t.off+int64(len(t.buf)) {
		return false
	}
	copy(p, t.buf[off-t.off:])
	return true
}
