// Package sqlitevfs runs SQLite (the pure-Go github.com/ncruces/go-sqlite3)
// on diskio: a VFS whose main database, rollback journal, WAL and
// super-journal files are diskio Files, so that SQLite's reads, writes and
// syncs go through a diskio scheduler (io_uring or Linux AIO) instead of
// blocking an OS thread each.
//
// Register it under a name and open databases with that name as the "vfs"
// URI parameter:
//
//	sqlitevfs.Register("diskio", sqlitevfs.Options{})
//	db, err := sql.Open("sqlite3", sqlitevfs.URI("app.db", "diskio"))
//
// How SQLite's VFS methods map onto diskio, and why:
//
//   - xRead, xWrite: File.ReadAt and File.WriteAt. In the page-cache mode a
//     read the page cache holds is a copy on the caller's goroutine
//     (preadv2 RWF_NOWAIT); only a miss goes to the scheduler, where many
//     connections' misses are in flight at once from one thread. In direct
//     mode a request smaller than a page of the page cache goes through a
//     page-cache File on the same file (see Two modes). A full
//     disk (ENOSPC) is SQLITE_FULL; EIO, ERANGE and ENXIO on a read are
//     SQLITE_IOERR_CORRUPTFS, as in SQLite's unix VFS. A WAL frame's two
//     writes (its 24-byte header, then the page) are one: the header is
//     held until the page's write continues it, and written before any
//     other use of the file (walwrite_linux.go says why no reader can
//     tell).
//   - xSync: File.Datasync (fdatasync) for SQLITE_SYNC_NORMAL and
//     SQLITE_SYNC_DATAONLY, which is every sync at SQLite's default
//     settings and what SQLite's unix VFS issues on Linux; File.Sync
//     (fsync) for SQLITE_SYNC_FULL without DATAONLY (PRAGMA fullfsync).
//     diskio flushes concurrent syncs of a file together (group commit).
//     The first sync of a journal or WAL a connection created also syncs
//     its directory, and deleting a journal with SQLite's syncDir flag
//     syncs the directory: fdatasync of the directory through the
//     scheduler, as SQLite's unix VFS does on Linux.
//   - xFileSize: the kernel's size (other processes change it), by
//     lseek(SEEK_END) as a raw system call (it cannot sleep), so that the
//     Go runtime starts no thread for it.
//   - xLock, xUnlock, xCheckReservedLock: SQLite's lock protocol on the
//     database file's PENDING, RESERVED and SHARED bytes (offset 1 GiB),
//     with open file description locks (F_OFD_SETLK) on the diskio File's
//     descriptor, as ncruces' default VFS takes them (the calls that
//     cannot wait are raw system calls, as xFileSize's): connections in one
//     process exclude each other, and so do processes using this VFS,
//     ncruces' default VFS, or SQLite's C library.
//   - xShmMap, xShmLock (WAL mode): the -shm file mapped into every
//     connection's memory, with OFD locks on its bytes, by ncruces' own
//     implementation (vfs.NewSharedMemory), so the WAL-index is shared with
//     the default VFS and across processes exactly as SQLite needs it.
//   - xSectorSize: 4096, the page cache's page (SQLite's unix VFS says
//     4096 too); in direct mode the larger of that and the file's
//     direct-I/O block.
//   - xDeviceCharacteristics: SQLITE_IOCAP_POWERSAFE_OVERWRITE (unless
//     "psow=0"; diskio never writes a byte it was not given, in either
//     mode) and SQLITE_IOCAP_SUBPAGE_READ.
//   - SQLITE_FCNTL_SIZE_HINT: fallocate up to the hinted size
//     (File.Preallocate), as ncruces' default VFS does.
//   - xAccess, xFullPathname: the default VFS's. Temporary files (temp
//     databases, statement journals, transient indices), which are never
//     synced nor shared, are the default VFS's files.
//
// Memory-mapped I/O (PRAGMA mmap_size) is not offered: SQLite reads
// through xRead instead.
//
// # Two modes
//
// PageCache (the default) opens every file through the kernel's page
// cache, as SQLite's own VFS does; it replaces the default VFS without
// changing what the database needs in memory. Direct opens the main
// database O_DIRECT where the filesystem allows: SQLite's page cache
// (PRAGMA cache_size) is then the database's only cache, every miss a disk
// read through the scheduler and every page written a disk write. Only
// whole pages of the page cache (4096 bytes, or the direct-I/O block if
// larger) go O_DIRECT: smaller requests, which are SQLite's header reads
// and every page of a database with pages under 4096 bytes, go through
// the page cache (partpage_linux.go says why that is coherent). The
// rollback journal and the WAL stay page-cache files in both modes: they
// are written sequentially in pieces that are not block-sized (a WAL frame
// is 24 bytes of header and a page) and made durable by the commit's
// fdatasync, and WAL readers re-read their recent frames.
//
// On systems other than Linux diskio is os.File, and New returns SQLite's
// default VFS.
package sqlitevfs
