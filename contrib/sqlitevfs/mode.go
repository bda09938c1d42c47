package sqlitevfs

import (
	"fmt"
	"strconv"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// Mode is how the database's files use the kernel's page cache.
type Mode int

const (
	// PageCache opens the files through the page cache
	// (diskio.PageCache), as SQLite's own VFS does: reads the page cache
	// holds are copies on the caller's goroutine (preadv2 RWF_NOWAIT,
	// no system call that can block a thread on the disk); only misses
	// go to the scheduler, which keeps many of them in flight from one
	// thread. Writes land in the page cache and the commit's sync writes
	// them. It is the default, and the mode that replaces SQLite's own
	// VFS without changing how much memory the database needs.
	PageCache Mode = iota
	// Direct opens the main database file O_DIRECT where the filesystem
	// allows (diskio's Direct mode): every page SQLite's own cache
	// (PRAGMA cache_size) misses is a disk read, and every page written
	// reaches the disk before the write returns. That holds for pages of
	// 4096 bytes and more (a page of the page cache, or the direct-I/O
	// block if larger); requests smaller than that, so every page of a
	// database with smaller pages, go through the page cache. Journals
	// and the WAL stay page-cache files (see the package doc). Choose it
	// when SQLite's cache is sized to the working set and the page cache
	// should not hold the database a second time.
	Direct
)

func (m Mode) String() string {
	switch m {
	case PageCache:
		return "pagecache"
	case Direct:
		return "direct"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode returns the Mode named "pagecache" or "direct".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "pagecache":
		return PageCache, nil
	case "direct":
		return Direct, nil
	}
	return 0, fmt.Errorf("sqlitevfs: unknown mode %q (have pagecache, direct)", s)
}

// Options configure a VFS. The zero value is the page-cache mode on the
// process-wide scheduler.
type Options struct {
	// Mode is how the main database file uses the page cache.
	Mode Mode
	// Scheduler does the files' I/O; nil is diskio's process-wide one
	// (sched.Default). A scheduler of one's own carries a Tracer, a
	// worker cap or injected faults (sched.Options).
	Scheduler *sched.Scheduler
}

// diskioMode is m as diskio names it.
func diskioMode(m Mode) diskio.DirectMode {
	if m == Direct {
		return diskio.Direct
	}
	return diskio.PageCache
}
