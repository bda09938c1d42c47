//go:build linux

package pebblevfs

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// New returns a vfs.FS that keeps Pebble's sstables (.sst), blob files
// (.blob) and WAL files (.log) on diskio Files opened with opts (for
// example diskio.WithScheduler, to choose the scheduler and its Tracer),
// and everything else on vfs.Default.
func New(opts ...diskio.Option) vfs.FS {
	return &FS{FS: vfs.Default, opts: opts}
}

// NewMode is New with the mode chosen: Direct (New's) or PageCache.
func NewMode(m Mode, opts ...diskio.Option) vfs.FS {
	return &FS{FS: vfs.Default, opts: opts, Mode: m}
}

// FS is the vfs.FS New returns. Methods it does not override are
// vfs.Default's.
type FS struct {
	vfs.FS // vfs.Default: directories, locks, listing, renames, metadata files
	opts   []diskio.Option

	// WALDSync opens WAL files O_DSYNC: a WAL write is durable when it
	// completes, so SyncData has nothing left to do. Without it (the
	// default) a synced commit writes, then waits for an fdatasync.
	// It is off by default: cmd/ycsb (-fs default,diskio,diskio-dsync)
	// finds no gain on workload A (synced updates), and a slower load
	// (NoSync commits), whose WAL writes all become durable writes.
	WALDSync bool

	// WALDirect opens WAL files O_DIRECT in Direct mode: a write's whole
	// blocks go to the disk at once, its partial first and last blocks
	// through the page cache. Without it (the default) WAL files are
	// page-cache files in both modes: Pebble never reads a live WAL, a
	// write is a copy on the caller, and the fdatasync of a synced commit
	// writes the pages out, as with vfs.Default; the pages are clean and
	// reclaimable after it. Measured with cmd/ycsb, -fs
	// diskio-direct,diskio-direct-waldirect: see docs/2026-11-25-history.md.
	WALDirect bool

	// Mode says whether Pebble's files bypass the page cache (Direct, the
	// zero value) or keep it (PageCache). Set it before Pebble opens a file.
	Mode Mode

	// NoClasses opens every file Unclassified. By default the FS gives
	// its files I/O classes (diskio.WithClass): WALs and the reads of
	// Pebble's iterators and gets sched.Latency; the tables and blob
	// files it writes (flushes and compactions) and files opened with
	// vfs.SequentialReadsOption (compaction inputs, long scans)
	// sched.Background. So while a synced commit or a foreground read
	// waits, the scheduler bounds the compaction I/O in flight (see
	// sched.ClassOptions).
	NoClasses bool

	// ReadAhead is how many 256 KiB reads a direct file opened with
	// vfs.SequentialReadsOption (compaction inputs) keeps in flight;
	// 0 means DefaultReadAhead. Page-cache files use the kernel's read-ahead.
	ReadAhead int

	// FreshBytes is how much of the data files it wrote last a Direct FS
	// keeps in memory for the reads that follow (the compactions that
	// take new tables as input; see freshCache). 0 means
	// DefaultFreshBytes; a negative value keeps nothing. PageCache mode
	// has the page cache. It is a limit: while gets and iterators miss
	// the block cache more than compactions read from the fresh cache,
	// it holds less, down to 32 MiB (see freshCache).
	FreshBytes int64

	// Cache, if set (to the pebble.Cache of pebble.Options.Cache), is the
	// block cache the fresh cache takes its memory from: what it holds is
	// reserved there (Cache.Reserve, as Pebble does for its memtables),
	// and given back when it drops it. The database's memory is then the
	// block cache alone, shared: the fresh cache grows while tables are
	// written and compacted, and read-mostly work has the whole cache for
	// blocks. Without it, count FreshBytes besides the block cache.
	Cache Reserver

	freshOnce sync.Once
	fresh     *freshCache

	schedOnce sync.Once
	sched     *sched.Scheduler // the files' scheduler: removals and metadata syncs go through it too
}

// Reserver is the part of *pebble.Cache the FS uses: a reservation of
// n bytes, released by calling the function returned.
type Reserver interface {
	Reserve(n int) func()
}

// DefaultFreshBytes is FS.FreshBytes's default.
const DefaultFreshBytes = 256 << 20

// freshCache returns the FS's fresh cache, or nil in PageCache mode or
// with FreshBytes < 0.
func (d *FS) freshCache() *freshCache {
	d.freshOnce.Do(func() {
		n := d.FreshBytes
		if n == 0 {
			n = DefaultFreshBytes
		}
		if d.Mode == Direct {
			d.fresh = newFreshCache(n, d.Cache)
		}
	})
	return d.fresh
}

// FreshStats returns the bytes the fresh cache holds and the files it
// has entries for.
func (d *FS) FreshStats() (bytes int64, files int) { return d.freshCache().stats() }

// open opens a diskio file of kind k with the FS's mode, in class c.
func (d *FS) open(name string, k kind, flag int, perm os.FileMode, c sched.Class) (*diskio.File, error) {
	mode := d.Mode.DirectMode()
	if k == wal && !d.WALDirect {
		mode = diskio.PageCache
	}
	opts := append(d.opts[:len(d.opts):len(d.opts)], diskio.WithDirect(mode))
	if !d.NoClasses {
		opts = append(opts, diskio.WithClass(c))
	}
	return diskio.OpenFile(name, flag, perm, opts...)
}

// writeClass is the class of the files Pebble writes: its WALs wait for
// commits, its tables and blob files are flushes and compactions.
func writeClass(k kind) sched.Class {
	if k == wal {
		return sched.Latency
	}
	return sched.Background
}

var _ vfs.FS = (*FS)(nil)

// kind says how a file is written, from its name.
type kind int

const (
	other kind = iota // MANIFEST, OPTIONS, markers, temporary files: vfs.Default
	data              // sstables and blob files: gathered, written behind
	wal               // write-ahead logs: every Write goes to the file
)

func kindOf(name string) kind {
	switch {
	case strings.HasSuffix(name, ".sst"), strings.HasSuffix(name, ".blob"):
		return data
	case strings.HasSuffix(name, ".log"):
		return wal
	}
	return other
}

// Create creates name for reading and writing, removing an existing file
// first so the result is a new inode (vfs.Default's contract).
func (d *FS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	k := kindOf(name)
	if k == other {
		f, err := d.FS.Create(name, category)
		return d.meta(f, name, false), err
	}
	flag := os.O_RDWR | os.O_CREATE | os.O_EXCL | d.extra(k)
	f, err := d.open(name, k, flag, 0o666, writeClass(k))
	for errors.Is(err, fs.ErrExist) {
		if rerr := d.Remove(name); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return nil, rerr
		}
		f, err = d.open(name, k, flag, 0o666, writeClass(k))
	}
	if err != nil {
		return nil, err
	}
	return d.writer(f, k, true)
}

// writer returns f, of kind k, as the vfs.File Pebble writes: a WAL's
// every Write goes to the file (the File writes whole blocks O_DIRECT and
// partial ones through the page cache, so nothing is padded or read
// back); a data file gathers writes (writeFile in Direct mode, gatherFile
// in PageCache), kept in the fresh cache if created here.
func (d *FS) writer(f *diskio.File, k kind, created bool) (vfs.File, error) {
	fi, err := vfs.Default.Stat(f.Name())
	if err != nil {
		f.Close()
		return nil, err
	}
	r := readFile{f: f, dev: fi.DeviceID()}
	switch {
	case k == wal:
		return &r, nil
	case !f.Direct():
		return &gatherFile{readFile: r, buf: make([]byte, 0, writeBuffer)}, nil
	}
	var cache *freshCache
	if created {
		cache = d.freshCache()
	}
	return newWriteFile(f, fi, cache), nil
}

// Remove removes name, and what the fresh cache holds of it. The unlink
// goes through the FS's scheduler (sched.Scheduler.Unlinkat): freeing a
// table's blocks takes milliseconds, which would otherwise hold a thread.
func (d *FS) Remove(name string) error {
	d.freshCache().forget(name)
	if s := d.scheduler(); s != nil {
		return remove(s, name)
	}
	return d.FS.Remove(name)
}

// Open opens name for reading. With vfs.SequentialReadsOption (Pebble's
// compactions, and iterators that read far enough in order) the file reads
// ahead in large aligned chunks, as the kernel's read-ahead would for a
// buffered file.
func (d *FS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	if kindOf(name) == other {
		f, err := d.FS.Open(name, opts...)
		return d.meta(f, name, false), err
	}
	class := sched.Latency // an iterator's or a get's reads
	for _, o := range opts {
		if o == vfs.SequentialReadsOption {
			class = sched.Background // a compaction's input, or a long scan
		}
	}
	f, err := d.open(name, kindOf(name), os.O_RDONLY, 0, class)
	if err != nil {
		return nil, err
	}
	fi, err := vfs.Default.Stat(name)
	if err != nil {
		f.Close()
		return nil, err
	}
	r := readFile{f: f, dev: fi.DeviceID()}
	if f.Direct() {
		r.cache = d.freshCache()
		r.fresh = r.cache.lookup(fi)
	}
	var file vfs.File = &r
	for _, o := range opts {
		if o == vfs.SequentialReadsOption && f.Direct() {
			file = newSeqFile(r, d.ReadAhead)
		}
	}
	for _, o := range opts {
		o.Apply(file)
	}
	return file, nil
}

// OpenReadWrite opens name for reading and writing, creating it if needed.
func (d *FS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	k := kindOf(name)
	if k == other {
		f, err := d.FS.OpenReadWrite(name, category, opts...)
		return d.meta(f, name, false), err
	}
	f, err := d.open(name, k, os.O_RDWR|os.O_CREATE|d.extra(k), 0o666, writeClass(k))
	if err != nil {
		return nil, err
	}
	file, err := d.writer(f, k, false)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o.Apply(file)
	}
	return file, nil
}

// ReuseForWrite renames oldname to newname and opens it for writing from
// the start without truncating (Pebble recycles WAL files this way: the old
// records fail the new log number's checks and read as the end).
func (d *FS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	k := kindOf(newname)
	if k == other {
		f, err := d.FS.ReuseForWrite(oldname, newname, category)
		return d.meta(f, newname, false), err
	}
	if err := os.Rename(oldname, newname); err != nil {
		return nil, err
	}
	d.freshCache().forget(oldname)
	f, err := d.open(newname, k, os.O_RDWR|os.O_CREATE|d.extra(k), 0o666, writeClass(k))
	if err != nil {
		return nil, err
	}
	return d.writer(f, k, false)
}

// extra returns the open flags files of kind k get besides the access mode.
func (d *FS) extra(k kind) int {
	if k == wal && d.WALDSync {
		return unix.O_DSYNC
	}
	return 0
}

// Unwrap returns nil: FS is the root, not a wrapper Pebble may look
// through (vfs.Root would otherwise find vfs.Default and bypass diskio).
func (d *FS) Unwrap() vfs.FS { return nil }

// fileInfo is a diskio FileInfo (exact size) with its device.
type fileInfo struct {
	fs.FileInfo
	dev vfs.DeviceID
}

func (fi fileInfo) DeviceID() vfs.DeviceID { return fi.dev }

type sizedInfo struct {
	fileInfo
	size int64
}

func (fi sizedInfo) Size() int64 { return fi.size }
