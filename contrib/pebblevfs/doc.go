// Package pebblevfs runs Pebble (github.com/cockroachdb/pebble/v2) on
// diskio: New returns a vfs.FS whose sstables, blob files and write-ahead
// logs are diskio Files (O_DIRECT where the filesystem allows, their I/O
// batched by a diskio scheduler instead of blocking an OS thread each),
// while directories, locks, MANIFEST, OPTIONS and marker files stay on
// vfs.Default: they are small, rare and want the OS's semantics. Their
// syncs, and every Remove, go through the scheduler too (fsync, and
// unlinkat on io_uring's workers): each can wait for the disk for
// milliseconds, and a thread blocked in a system call makes the Go
// runtime start another to run Go code.
//
// How Pebble's File methods map onto diskio, and why:
//
//   - ReadAt: diskio's File, which takes any offset and length (Pebble's
//     block reads are unaligned: a block plus its 5-byte trailer at any
//     offset) through aligned bounce buffers.
//   - Write (sstables, blob files): gathered in an aligned 256 KiB buffer;
//     a full buffer is written in the background (up to 4 pending, written
//     one after another: ext4 serialises writes that extend a file, and
//     each would hold an io_uring worker) while the next one fills, as the
//     page cache's write-back would do; the rest
//     is written at Sync, SyncData, SyncTo, ReadAt, WriteAt and Close.
//     Every write is exact: diskio's File writes whole blocks O_DIRECT and
//     a partial last block through the page cache, so nothing is padded,
//     cut or read back.
//   - Write (WAL): every Write goes to the file. WAL files are page-cache
//     files in both modes (FS.WALDirect makes them O_DIRECT): Pebble never
//     reads a live WAL, a write is a copy on the caller, and the fdatasync
//     of a synced commit writes the pages, as with vfs.Default. YCSB's
//     workloads A and F and its load run faster this way than with
//     O_DIRECT WALs.
//   - Reads of a table the FS has just written (Direct mode): the buffers
//     a data file was written from are kept after their write, up to
//     FS.FreshBytes (default 256 MiB) for the whole FS, oldest out first,
//     and serve the reads of that file once its writer has closed it.
//     What it may hold adapts between 32 MiB and that limit: up by what it
//     serves compactions, down by what gets and iterators read from the
//     disk (the block cache it shares its memory with being too small).
//     These are the compactions that take new tables as input, which
//     bypass Pebble's block cache and which vfs.Default serves from the
//     page cache; without them a load reads its tables back from the
//     disk (RocksDB's prepopulate_block_cache answers the same
//     need). Remove drops a file's bytes; a file changed by anyone else
//     (its size or mtime differ) is read from the disk. With FS.Cache set
//     to Pebble's block cache, what the fresh cache holds is reserved
//     there (pebble.Cache.Reserve, as Pebble does for its memtables), so
//     the block cache is the database's whole memory and read-mostly work
//     gets all of it.
//   - SyncData → Datasync (fdatasync through the scheduler); Sync → Sync.
//   - SyncTo: Pebble calls it every BytesPerSync to start writeback of
//     dirty page-cache data early, with no durability promise. The
//     gathered bytes are written, and write-back of the file's dirty
//     pages (its partial blocks) started with
//     sync_file_range(SYNC_FILE_RANGE_WRITE), returning fullSync false.
//   - Preallocate → fallocate(FALLOC_FL_KEEP_SIZE), as Pebble's own
//     vfs.Default does: Pebble finds an sstable's footer at the file's end,
//     so preallocation must not change the size (diskio's File.Preallocate
//     grows the file, hence not used).
//   - Prefetch → diskio's File.Prefetch (readahead(2)): on a direct file
//     it does nothing, since O_DIRECT reads bypass the page cache (reading
//     the range into slots of our own doubles the bytes read, and makes
//     YCSB E slower). A direct file opened with
//     vfs.SequentialReadsOption (compactions, and iterators past Pebble's
//     readahead threshold, which then rely on the kernel's read-ahead)
//     reads through a diskio StreamReader instead: FS.ReadAhead reads of
//     256 KiB in flight (default 4), in the scheduler's registered memory.
//   - Fd: the descriptor diskio does its I/O on.
//
// # Two modes
//
// Direct (New, or NewMode(Direct, …)): the data files are O_DIRECT and
// Pebble's block cache is the cache, so the user sizes it
// (pebble.Options.Cache) to the memory the database may use, as the page
// cache would otherwise take it, and gives it to the FS too (FS.Cache).
// Choose it for a process that owns its
// memory: block-cache hits cost no system call, the disk sees only
// Pebble's misses, nothing is cached twice, and no thread ever blocks on
// the disk.
//
// PageCache (NewMode(PageCache, …)): the files are diskio.PageCache files.
// Reads the page cache holds are copied on the caller's goroutine
// (preadv2 RWF_NOWAIT) and only misses go to the scheduler; writes land in
// the page cache; Prefetch is readahead(2), SequentialReadsOption the
// kernel's sequential read-ahead, and SyncTo starts write-back
// (sync_file_range SYNC_FILE_RANGE_WRITE) as vfs.Default does. Choose it to
// replace vfs.Default without enlarging the block cache: the page cache
// keeps serving what the block cache misses. Data files gather their
// writes into 256 KiB before writing them (one request instead of 64 of
// Pebble's 4 KiB ones); reads, Stat and syncs write what is gathered
// first. There is no fresh cache: the page cache is one.
//
// On systems other than Linux diskio is os.File, and New returns
// vfs.Default.
package pebblevfs
