//go:build linux

package sqlitevfs

import (
	"os"
	"strconv"

	"github.com/ncruces/go-sqlite3/vfs"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/sys"
)

// Requests smaller than a page of the page cache on a direct file.
//
// A direct database file sends O_DIRECT only the requests that cover
// whole pages of the page cache (4096 bytes, or the direct-I/O block if
// larger: directUnit); a smaller or unaligned read or write goes through
// the page cache, by a second, page-cache diskio File on the same open
// file (part). A database whose pages are smaller than that unit (PRAGMA
// page_size=512 to 2048) so runs through the page cache entirely, as in
// the PageCache mode; one with pages of the unit or larger (SQLite's
// default 4096 and up) stays O_DIRECT for every page, and only SQLite's
// reads of the header (its first 100 bytes, the 16-byte change counter at
// each transaction in rollback mode) and of overflow pages' heads come
// from the page cache.
//
// Why: O_DIRECT avoids caching what SQLite caches itself, which pays
// only for whole pages. Pages smaller than the page cache's are neither
// written nor read well direct: each is a synchronous device request of
// less than the device's physical block, and with a small SQLite cache a
// transaction reads each page many times over (mptest's crash02 script
// with PRAGMA cache_size=10 at 512-byte pages, every read a device round
// trip).
//
// Why it is correct: the kernel keeps the page cache and O_DIRECT I/O of
// one file coherent, across descriptors and processes. A direct read or
// write first writes back and drops the cached pages in its range, and a
// direct write drops them again after it, so a page-cache read that
// follows sees the direct write, and a direct read that follows sees the
// page-cache write. What it does not order is a page-cache request and a
// direct one to the same page of the page cache at the same moment;
// SQLite's locks exclude that, as they exclude a read of bytes another
// connection is writing: a writer holds the database's EXCLUSIVE lock (no
// reader) or, in WAL mode, writes the database only in a checkpoint, of
// pages every reader then reads from the WAL. Within one connection SQLite
// makes one call at a time. The requests routed here are the whole of a
// sub-unit page's I/O, so for such a database no direct request touches
// the same page of the page cache at all.
//
// Durability: Sync flushes the File that wrote since the last sync
// (both, if both did), with a flush of the same kind; a flush of either
// covers the device writes of both, since fsync and fdatasync flush the
// file, not the descriptor. A failed flush of part fails every later Sync
// (diskio's File keeps its own failure the same way).

// directUnit is the smallest request a direct File is sent: a page of the
// page cache, or the direct-I/O block if larger.
func directUnit(df *diskio.File) int {
	return max(os.Getpagesize(), df.Alignment())
}

// fileFor returns the File that reads or writes p at off: part for a
// direct file's request that does not cover whole units, else f.f.
func (f *file) fileFor(p []byte, off int64) (*diskio.File, error) {
	if !f.direct || off%int64(f.unit) == 0 && len(p)%f.unit == 0 {
		return f.f, nil
	}
	if f.part == nil {
		part, err := f.openPart()
		if err != nil {
			return nil, err
		}
		f.part = part
	}
	return f.part, nil
}

// openPart opens f's file again, through /proc/self/fd (the same file
// even if its name has moved), as a page-cache diskio File on the same
// scheduler, with f's access mode.
func (f *file) openPart() (*diskio.File, error) {
	acc := unix.O_RDWR
	if f.flags&vfs.OPEN_READWRITE == 0 {
		acc = unix.O_RDONLY
	}
	fd, err := sys.Open("/proc/self/fd/"+strconv.Itoa(f.fd), acc, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: f.name, Err: err}
	}
	opts := []diskio.Option{diskio.WithDirect(diskio.PageCache)}
	if f.vfs.opts.Scheduler != nil {
		opts = append(opts, diskio.WithScheduler(f.vfs.opts.Scheduler))
	}
	return diskio.NewFile(os.NewFile(uintptr(fd), f.name), opts...)
}

// wrote notes that df is about to write, for Sync.
func (f *file) wrote(df *diskio.File) {
	if df == f.part {
		f.partWrote = true
	} else {
		f.directWrote = true
	}
}

// syncFiles flushes what the file wrote (fsync when full, else
// fdatasync): f.f, as always, unless only part wrote since the last sync.
func (f *file) syncFiles(full bool) error {
	if f.syncErr != nil {
		return f.syncErr
	}
	flush := func(df *diskio.File) error {
		if full {
			return df.Sync()
		}
		return df.Datasync()
	}
	if f.partWrote {
		if err := flush(f.part); err != nil {
			f.syncErr = err
			return err
		}
		f.partWrote = false
		if !f.directWrote {
			return nil
		}
	}
	if err := flush(f.f); err != nil {
		return err // f.f keeps it: directWrote stays, so every later sync asks f.f
	}
	f.directWrote = false
	return nil
}
