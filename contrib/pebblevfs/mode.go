package pebblevfs

import (
	"fmt"
	"strconv"
)

// Mode is how the FS's files use the kernel's page cache.
type Mode int

const (
	// Direct opens sstables, blob files and WALs O_DIRECT (where the
	// filesystem allows): Pebble's block cache is the only cache, so size
	// it (pebble.Options.Cache) to the memory the database may use, as
	// one would give the page cache. Choose it when the process owns the
	// machine's memory for the database, or when the page cache would
	// cache the same blocks twice: reads of cached blocks cost no system
	// call at all, and the disk sees exactly Pebble's misses.
	Direct Mode = iota
	// Buffered opens them through the page cache (diskio.PageCache):
	// reads that hit it are copies on the caller's goroutine
	// (preadv2 RWF_NOWAIT, no blocked thread), only misses go to the
	// scheduler; Prefetch is readahead and SequentialReadsOption the
	// kernel's sequential read-ahead, as with vfs.Default. Choose it when
	// the block cache stays small (Pebble's default 8 MiB, or a process
	// sharing memory with others), when the database is re-read by other
	// processes, or when it is a drop-in replacement for vfs.Default that
	// must not need a larger block cache to match it.
	Buffered
)

func (m Mode) String() string {
	switch m {
	case Direct:
		return "direct"
	case Buffered:
		return "buffered"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode returns the Mode named "direct" or "buffered".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "direct":
		return Direct, nil
	case "buffered":
		return Buffered, nil
	}
	return 0, fmt.Errorf("pebblevfs: unknown mode %q (have direct, buffered)", s)
}
