// Package pebblevfs runs Pebble (github.com/cockroachdb/pebble/v2) on
// diskio: New returns a vfs.FS whose sstables, blob files and write-ahead
// logs are diskio Files (O_DIRECT where the filesystem allows, their I/O
// batched by a diskio scheduler instead of blocking an OS thread each),
// while directories, locks, MANIFEST, OPTIONS and marker files stay on
// vfs.Default: they are small, rare and want the OS's semantics.
//
// How Pebble's File methods map onto diskio, and why:
//
//   - ReadAt: diskio's File, which takes any offset and length (Pebble's
//     block reads are unaligned: a block plus its 5-byte trailer at any
//     offset) through aligned bounce buffers.
//   - Write: files are written front to back through an aligned buffer, so
//     every write is whole blocks and diskio never needs a read-modify-write
//     of an edge block. WAL files are written through on every Write (what
//     Pebble's LogWriter expects of a Write: the bytes are out of the
//     process); data files are written when a 256 KiB buffer fills and on
//     Sync, SyncData, SyncTo and Close (Pebble references an sstable only
//     after it has synced it). A partial last block is written padded with
//     zeros and the padding is cut (ftruncate) before any sync and at Close,
//     so the size on disk is always exact when it matters.
//   - SyncData → Datasync (fdatasync through the scheduler); Sync → Sync.
//   - SyncTo: Pebble calls it every BytesPerSync to start writeback of
//     dirty page-cache data early (sync_file_range on ext4), with no
//     durability promise (fullSync false). With O_DIRECT there is no dirty
//     page cache: a written block has reached the device when WriteAt
//     returns. So SyncTo writes out what is still buffered and returns
//     false, without the device-cache flush a Datasync would add. On a
//     file that fell back to buffered I/O it is a Datasync (fullSync true).
//   - Preallocate → fallocate(FALLOC_FL_KEEP_SIZE), as Pebble's own
//     vfs.Default does: Pebble finds an sstable's footer at the file's end,
//     so preallocation must not change the size (diskio's File.Preallocate
//     grows the file, hence not used).
//   - Prefetch → diskio's File.Prefetch (readahead(2)): on a direct file
//     it does nothing, since O_DIRECT reads bypass the page cache (reading
//     the range into slots of our own was measured and made YCSB E slower:
//     it doubled the bytes read). A direct file opened with
//     vfs.SequentialReadsOption (compactions, and iterators past Pebble's
//     readahead threshold, which then rely on the kernel's read-ahead)
//     reads through a diskio StreamReader instead: FS.ReadAhead reads of
//     256 KiB in flight (default 4), in the scheduler's registered memory.
//   - Fd: the descriptor diskio does its I/O on.
//
// # Two modes
//
// Direct (New, or NewMode(Direct, …)): the files are O_DIRECT and Pebble's
// block cache is the only cache, so the user sizes it
// (pebble.Options.Cache) to the memory the database may use, as the page
// cache would otherwise take it. Choose it for a process that owns its
// memory: block-cache hits cost no system call, the disk sees only
// Pebble's misses, nothing is cached twice, and no thread ever blocks on
// the disk.
//
// Buffered (NewMode(Buffered, …)): the files are diskio.PageCache files.
// Reads the page cache holds are copied on the caller's goroutine
// (preadv2 RWF_NOWAIT) and only misses go to the scheduler; writes land in
// the page cache; Prefetch is readahead(2), SequentialReadsOption the
// kernel's sequential read-ahead, and SyncTo starts write-back
// (sync_file_range SYNC_FILE_RANGE_WRITE) as vfs.Default does. Choose it to
// replace vfs.Default without enlarging the block cache: the page cache
// keeps serving what the block cache misses. In this mode the write path
// of Direct (aligned buffers, padding) is not used: a WAL Write is a
// diskio File write at the file's offset, and data files gather their
// writes into 256 KiB before writing them (one request instead of 64 of
// Pebble's 4 KiB ones); reads, Stat and syncs write what is gathered first.
//
// On systems other than Linux diskio is os.File, and New returns
// vfs.Default.
package pebblevfs
