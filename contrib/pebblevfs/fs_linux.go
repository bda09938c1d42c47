//go:build linux

package pebblevfs

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
)

// New returns a vfs.FS that keeps Pebble's sstables (.sst), blob files
// (.blob) and WAL files (.log) on diskio Files opened with opts (for
// example diskio.WithScheduler, to choose the scheduler and its Tracer),
// and everything else on vfs.Default.
func New(opts ...diskio.Option) vfs.FS {
	return &FS{FS: vfs.Default, opts: opts}
}

// NewMode is New with the mode chosen: Direct (New's) or Buffered.
func NewMode(m Mode, opts ...diskio.Option) vfs.FS {
	return &FS{FS: vfs.Default, opts: opts, Mode: m}
}

// FS is the vfs.FS New returns. Methods it does not override are
// vfs.Default's.
type FS struct {
	vfs.FS // vfs.Default: directories, locks, listing, renames, metadata files
	opts   []diskio.Option

	// WALDSync opens WAL files O_DSYNC: a WAL write is durable when it
	// completes (the kernel writes and flushes in one request), so
	// SyncData has nothing left to do. Without it (the default) a synced
	// commit waits for the write, then for an fdatasync. Measured with
	// cmd/ycsb (-fs default,diskio,diskio-dsync): no gain on workload A
	// (synced updates) within the run-to-run noise, and a 0.68x load
	// (NoSync commits), whose WAL writes all became durable writes.
	WALDSync bool

	// Mode says whether Pebble's files bypass the page cache (Direct, the
	// zero value) or keep it (Buffered). Set it before Pebble opens a file.
	Mode Mode

	// ReadAhead is how many 256 KiB reads a direct file opened with
	// vfs.SequentialReadsOption (compaction inputs) keeps in flight;
	// 0 means DefaultReadAhead. Buffered files use the kernel's read-ahead.
	ReadAhead int
}

// open opens a diskio file of the FS with its mode.
func (d *FS) open(name string, flag int, perm os.FileMode) (*diskio.File, error) {
	opts := d.opts
	if d.Mode == Buffered {
		opts = append(opts[:len(opts):len(opts)], diskio.WithDirect(diskio.PageCache))
	}
	return diskio.OpenFile(name, flag, perm, opts...)
}

var _ vfs.FS = (*FS)(nil)

// kind says how a file is written, from its name.
type kind int

const (
	other kind = iota // MANIFEST, OPTIONS, markers, temporary files: vfs.Default
	data              // sstables and blob files: buffered until a sync
	wal               // write-ahead logs: written through on every Write
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
		return d.FS.Create(name, category)
	}
	flag := os.O_RDWR | os.O_CREATE | os.O_EXCL | d.extra(k)
	f, err := d.open(name, flag, 0o666)
	for errors.Is(err, fs.ErrExist) {
		if rerr := os.Remove(name); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return nil, rerr
		}
		f, err = d.open(name, flag, 0o666)
	}
	if err != nil {
		return nil, err
	}
	return newWriteFile(f, k == wal, d.extra(k) != 0)
}

// Open opens name for reading. With vfs.SequentialReadsOption (Pebble's
// compactions, and iterators that read far enough in order) the file reads
// ahead in large aligned chunks, as the kernel's read-ahead would for a
// buffered file.
func (d *FS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	if kindOf(name) == other {
		return d.FS.Open(name, opts...)
	}
	f, err := d.open(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	dev, err := deviceOf(name)
	if err != nil {
		f.Close()
		return nil, err
	}
	var file vfs.File = &readFile{f: f, dev: dev}
	for _, o := range opts {
		if o == vfs.SequentialReadsOption && f.Direct() {
			file = newSeqFile(f, dev, d.ReadAhead)
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
		return d.FS.OpenReadWrite(name, category, opts...)
	}
	f, err := d.open(name, os.O_RDWR|os.O_CREATE|d.extra(k), 0o666)
	if err != nil {
		return nil, err
	}
	file, err := newWriteFile(f, k == wal, d.extra(k) != 0)
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
		return d.FS.ReuseForWrite(oldname, newname, category)
	}
	if err := os.Rename(oldname, newname); err != nil {
		return nil, err
	}
	f, err := d.open(newname, os.O_RDWR|os.O_CREATE|d.extra(k), 0o666)
	if err != nil {
		return nil, err
	}
	return newWriteFile(f, k == wal, d.extra(k) != 0)
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

// deviceOf returns the device of name; vfs.DeviceID has no exported
// constructor, so it comes from vfs.Default's Stat.
func deviceOf(name string) (vfs.DeviceID, error) {
	fi, err := vfs.Default.Stat(name)
	if err != nil {
		return vfs.DeviceID{}, err
	}
	return fi.DeviceID(), nil
}

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
