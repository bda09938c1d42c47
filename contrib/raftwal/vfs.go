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

	cachesMu sync.Mutex
	caches   map[string]*chunkCache // direct mode: by path, shared by the path's open files

	schedOnce sync.Once
	sched     *sched.Scheduler // nil: removals and directory syncs are the os package's
}

var _ types.VFS = (*VFS)(nil)

// New returns a VFS with the given options.
func New(opts Options) *VFS {
	return &VFS{opts: opts, fopts: opts.fileOptions()}
}

// Mode returns the mode the VFS opens segment files in.
func (v *VFS) Mode() diskio.DirectMode { return v.opts.Mode }

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
	w := &writableFile{File: f, vfs: v, dir: dir, path: path}
	if n := v.opts.tailChunks(); n > 0 {
		w.cache = v.cacheFor(path, n, true, int64(size))
	}
	return w, nil
}

// Delete removes dir/name and syncs dir, as raft-wal's fs.FS.Delete does;
// both go through the scheduler (unlink can wait for the disk while it
// frees a segment's blocks).
func (v *VFS) Delete(dir, name string) error {
	path := filepath.Join(dir, name)
	v.cachesMu.Lock()
	delete(v.caches, path) // a file created later under the name starts afresh
	v.cachesMu.Unlock()
	if err := v.remove(path); err != nil {
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
	if !v.opts.direct() || v.opts.tailChunks() == 0 {
		return f, nil // the page cache serves readers
	}
	path := filepath.Join(dir, name)
	return &readableFile{File: f, vfs: v, path: path, cache: v.cacheFor(path, readerChunks, false, 0)}, nil
}

// OpenWriter opens dir/name for reading and writing. Its Sync syncs the
// file only: a file that exists already has its name in its directory (as
// with raft-wal's fs.FS.OpenWriter).
func (v *VFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	path := filepath.Join(dir, name)
	f, err := diskio.OpenFile(path, os.O_RDWR, 0o644, v.fopts...)
	if err != nil {
		return nil, err
	}
	w := &writableFile{File: f, vfs: v, dir: dir, path: path}
	w.dirSynced.Store(true)
	if n := v.opts.tailChunks(); n > 0 {
		w.cache = v.cacheFor(path, n, false, 0)
	}
	return w, nil
}

// writableFile is a segment open for writing. Its first Sync after Create
// also syncs the directory.
type writableFile struct {
	*diskio.File
	vfs       *VFS
	dir       string
	dirSynced atomic.Bool
	path      string
	cache     *chunkCache // nil: none
}

// WriteAt writes p at off, and into the cache if there is one.
func (w *writableFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := w.File.WriteAt(p, off)
	if w.cache != nil {
		if err != nil || n != len(p) {
			w.cache.drop()
		} else {
			w.cache.wrote(p, off)
		}
	}
	return n, err
}

// ReadAt reads from the cache where it can, else from the file.
func (w *writableFile) ReadAt(p []byte, off int64) (int, error) {
	if w.cache != nil && off >= 0 {
		if n, err, ok := w.cache.read(p, off, w.File.ReadAt); ok {
			return n, err
		}
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

// Close closes the file and lets go of its cache.
func (w *writableFile) Close() error {
	err := w.File.Close()
	if w.cache != nil {
		w.vfs.release(w.path, w.cache)
	}
	return err
}

// readableFile is a segment read in direct mode, through the cache its
// path shares with the VFS's other files of that path.
type readableFile struct {
	*diskio.File
	vfs   *VFS
	path  string
	cache *chunkCache
}

// ReadAt reads from the cache where it can, else from the file.
func (r *readableFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= 0 {
		if n, err, ok := r.cache.read(p, off, r.File.ReadAt); ok {
			return n, err
		}
	}
	return r.File.ReadAt(p, off)
}

// Close closes the file and lets go of its cache.
func (r *readableFile) Close() error {
	err := r.File.Close()
	r.vfs.release(r.path, r.cache)
	return err
}

// cacheFor returns the cache of path, shared by the VFS's open files of
// that path (so a reader sees what a writer of the VFS wrote), holding at
// least chunks chunks. fresh (Create) says the file was just created,
// reading as size zero bytes.
func (v *VFS) cacheFor(path string, chunks int, fresh bool, size int64) *chunkCache {
	v.cachesMu.Lock()
	defer v.cachesMu.Unlock()
	c := v.caches[path]
	if c == nil || fresh {
		c = &chunkCache{}
		if v.caches == nil {
			v.caches = make(map[string]*chunkCache)
		}
		v.caches[path] = c
	}
	c.mu.Lock()
	c.noLoad = !v.opts.direct()
	c.refs++
	c.max = max(c.max, chunks)
	if fresh {
		c.fresh, c.hi, c.size = true, 0, size
	}
	c.mu.Unlock()
	return c
}

// release drops a file's reference to its path's cache, and the cache
// with the last one.
func (v *VFS) release(path string, c *chunkCache) {
	v.cachesMu.Lock()
	defer v.cachesMu.Unlock()
	c.mu.Lock()
	c.refs--
	last := c.refs == 0
	c.mu.Unlock()
	if last {
		if v.caches[path] == c {
			delete(v.caches, path)
		}
		c.drop()
	}
}
