package raftwal

import (
	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// Mode is how the segment files use the kernel's page cache: diskio's
// DirectMode, under the name this package has always given it.
//
// PageCache (diskio.PageCache), the default, opens the segment files
// through the page cache, as raft-wal's own fs does: an append is a copy
// into the page cache on the caller's goroutine, the commit's Sync writes
// it, and a read of a recent entry (raft replicating it, the FSM applying
// it) is a copy from the page cache on the caller (preadv2 RWF_NOWAIT).
// Only what must wait for the disk goes to the scheduler: the syncs,
// page-cache misses.
//
// Direct (diskio.Direct) opens the segment files O_DIRECT where the
// filesystem allows, and keeps a segment's recent 256 KiB chunks in
// memory (Options.TailCache), so that the entries raft reads back right
// after appending them never go to the disk. Older entries (a follower
// catching up from far behind, a restart's replay) are read from the disk
// in whole chunks, not from the page cache. Choose it to keep a large log
// out of a page cache that other work needs; see the package doc for what
// it costs. diskio.DirectRequired is Direct, but opening a segment fails
// where the filesystem refuses O_DIRECT.
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

// DefaultTailCache is the Direct mode's default Options.TailCache: 4 MiB,
// thousands of raft entries of the sizes consensus systems write.
const DefaultTailCache = 4 << 20

// Options configure a VFS. The zero value is the page-cache mode on the
// process-wide scheduler.
type Options struct {
	// Mode is how the segment files use the page cache (see Mode).
	Mode diskio.DirectMode
	// Scheduler does the files' I/O, the directory syncs and the
	// removals; nil is diskio's process-wide one (sched.Default). A
	// scheduler of one's own carries a Tracer, a worker cap or injected
	// faults (sched.Options).
	Scheduler *sched.Scheduler
	// TailCache is how many bytes of a segment being written the VFS
	// keeps in memory, in 256 KiB chunks (at least two), to serve reads
	// from: raft reads each entry back right after appending it, through
	// raft-wal's 64 KiB read buffer. 0 is DefaultTailCache; a negative
	// value keeps none. In PageCache mode the cache is off unless
	// TailCache is positive, and its chunks are only those a new
	// segment's writes made (its bytes past them are its preallocation's
	// zeros); what they lack the page cache serves. It saves a 64 KiB
	// read system call per entry read back, but on a throttled disk the
	// fsyncs then write more requests (pages past the written end are no
	// longer read into the page cache ahead of the writes), and appends
	// slow down there; see docs/2026-11-28-measurements.md. In Direct mode a
	// segment's chunks are also read from the disk, whole, and a segment
	// only read keeps two. With none, in Direct mode every read goes to
	// the disk, 64 KiB at a time.
	TailCache int
}

func (o Options) fileOptions() []diskio.Option {
	var opts []diskio.Option
	if o.Scheduler != nil {
		opts = append(opts, diskio.WithScheduler(o.Scheduler))
	}
	if o.direct() {
		opts = append(opts, diskio.WithDirect(o.Mode))
	} else {
		opts = append(opts, diskio.WithDirect(diskio.PageCache))
	}
	return opts
}

// direct reports whether the segment files are direct ones (Direct or
// DirectRequired).
func (o Options) direct() bool { return o.Mode == diskio.Direct || o.Mode == diskio.DirectRequired }

// tailChunks is how many chunks a writer's cache keeps (0: none).
func (o Options) tailChunks() int {
	if o.TailCache < 0 || (!o.direct() && o.TailCache == 0) {
		return 0
	}
	n := o.TailCache
	if n == 0 {
		n = DefaultTailCache
	}
	return max(2, (n+chunkSize-1)/chunkSize)
}
