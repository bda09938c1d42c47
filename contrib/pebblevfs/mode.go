package pebblevfs

import (
	"strconv"

	"github.com/diskio-go/diskio"
)

// Mode is how the FS's files use the kernel's page cache: one of diskio's
// DirectModes (DirectMode says which), with Direct as its zero value, so
// that FS's zero Mode stays the direct mode New gives.
type Mode int

const (
	// Direct (diskio.Direct) opens sstables, blob files and WALs O_DIRECT
	// (where the filesystem allows): Pebble's block cache is the only
	// cache, so size it (pebble.Options.Cache) to the memory the database
	// may use, as one would give the page cache. Choose it when the
	// process owns the machine's memory for the database, or when the
	// page cache would cache the same blocks twice: reads of cached
	// blocks cost no system call at all, and the disk sees exactly
	// Pebble's misses.
	Direct Mode = iota
	// PageCache (diskio.PageCache) opens them through the page cache:
	// reads that hit it are copies on the caller's goroutine (preadv2
	// RWF_NOWAIT, no blocked thread), only misses go to the scheduler;
	// Prefetch is readahead and SequentialReadsOption the kernel's
	// sequential read-ahead, as with vfs.Default. Choose it when the
	// block cache stays small (Pebble's default 8 MiB, or a process
	// sharing memory with others), when the database is re-read by other
	// processes, or when it is a drop-in replacement for vfs.Default that
	// must not need a larger block cache to match it.
	PageCache
)

// Buffered is PageCache, under the name this package first gave it.
//
// Deprecated: use PageCache.
const Buffered = PageCache

// DirectMode returns m as diskio names it: PageCache is diskio.PageCache,
// any other value diskio.Direct (as the FS opens its files).
func (m Mode) DirectMode() diskio.DirectMode {
	if m == PageCache {
		return diskio.PageCache
	}
	return diskio.Direct
}

// String returns diskio's name of the mode: "direct" or "pagecache".
func (m Mode) String() string {
	if m != Direct && m != PageCache {
		return "Mode(" + strconv.Itoa(int(m)) + ")"
	}
	return m.DirectMode().String()
}

// MarshalText returns String's name; it fails for a value that is
// neither mode.
func (m Mode) MarshalText() ([]byte, error) {
	if m != Direct && m != PageCache {
		return nil, errMode(m.String())
	}
	return []byte(m.String()), nil
}

// UnmarshalText sets m to the mode text names, as diskio.DirectMode's
// UnmarshalText reads it: "direct", or "pagecache" (also "page-cache" and
// "buffered"). diskio's "direct-required" is not a mode of the FS.
func (m *Mode) UnmarshalText(text []byte) error {
	var d diskio.DirectMode
	if err := d.UnmarshalText(text); err != nil {
		return err
	}
	switch d {
	case diskio.PageCache:
		*m = PageCache
	case diskio.Direct:
		*m = Direct
	default:
		return errMode(d.String())
	}
	return nil
}

// ParseMode returns the Mode named s (see UnmarshalText).
func ParseMode(s string) (Mode, error) {
	var m Mode
	err := m.UnmarshalText([]byte(s))
	return m, err
}

type errMode string

func (e errMode) Error() string {
	return "pebblevfs: no such mode: " + string(e) + " (have direct, pagecache)"
}
