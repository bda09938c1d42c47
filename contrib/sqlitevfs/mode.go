package sqlitevfs

import (
	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// Mode is how the database's files use the kernel's page cache: diskio's
// DirectMode, under the name this package has always given it.
//
// PageCache (diskio.PageCache), the default, opens the files through the
// page cache, as SQLite's own VFS does: reads the page cache holds are
// copies on the caller's goroutine (preadv2 RWF_NOWAIT, no system call
// that can block a thread on the disk); only misses go to the scheduler,
// which keeps many of them in flight from one thread. Writes land in the
// page cache and the commit's sync writes them. It is the mode that
// replaces SQLite's own VFS without changing how much memory the database
// needs.
//
// Direct (diskio.Direct) opens the main database file O_DIRECT where the
// filesystem allows: every page SQLite's own cache (PRAGMA cache_size)
// misses is a disk read, and every page written reaches the disk before
// the write returns. That holds for pages of 4096 bytes and more (a page
// of the page cache, or the direct-I/O block if larger); requests smaller
// than that, so every page of a database with smaller pages, go through
// the page cache. Journals and the WAL stay page-cache files (see the
// package doc). Choose it when SQLite's cache is sized to the working set
// and the page cache should not hold the database a second time.
// diskio.DirectRequired is Direct, but opening the main database file
// fails where the filesystem refuses O_DIRECT.
//
// Deprecated: Mode is diskio.DirectMode; use that name.
type Mode = diskio.DirectMode

const (
	// Deprecated: PageCache is diskio.PageCache.
	PageCache = diskio.PageCache
	// Deprecated: Direct is diskio.Direct.
	Direct = diskio.Direct
)

// ParseMode returns the mode named s, as diskio.DirectMode's UnmarshalText
// reads it ("pagecache", "direct", "direct-required").
//
// Deprecated: use diskio.DirectMode's UnmarshalText.
func ParseMode(s string) (diskio.DirectMode, error) {
	var m diskio.DirectMode
	err := m.UnmarshalText([]byte(s))
	return m, err
}

// Options configure a VFS. The zero value is the page-cache mode on the
// process-wide scheduler.
type Options struct {
	// Mode is how the main database file uses the page cache (see Mode).
	Mode diskio.DirectMode
	// Scheduler does the files' I/O; nil is diskio's process-wide one
	// (sched.Default). A scheduler of one's own carries a Tracer, a
	// worker cap or injected faults (sched.Options).
	Scheduler *sched.Scheduler
}
