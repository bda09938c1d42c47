// Package raftwal runs hashicorp/raft-wal's segment files on diskio: a
// types.VFS whose files are diskio Files, so that raft-wal's reads, writes
// and syncs go through a diskio scheduler (io_uring or Linux AIO) instead
// of blocking an OS thread each. raft-wal's metadata store (its BoltDB
// file) stays its own.
//
//	vfs := raftwal.New(raftwal.Options{}) // page cache, sched.Default()
//	w, err := wal.Open(dir, wal.WithSegmentFiler(segment.NewFiler(dir, vfs)))
//	// w is raft's LogStore and StableStore
//
// What raft-wal's VFS asks, and how it maps onto diskio, with the
// durability of raft-wal's own fs package:
//
//   - Create: diskio.OpenFile with O_CREATE|O_EXCL|O_RDWR (an existing
//     name fails with fs.ErrExist), then File.Preallocate of the segment's
//     size (fallocate, growing the file, as raft-wal's fs does through
//     etcd's fileutil.Preallocate; ftruncate where the filesystem has no
//     fallocate). A size over math.MaxInt32 fails, as in raft-wal's fs,
//     but before the file is created. Nothing is synced yet.
//   - WritableFile.Sync: File.Sync (fsync, through the scheduler; group
//     commit when several flushes meet); the first Sync of a file Create
//     made also syncs its directory (fsync of the directory through the
//     scheduler), so that no commit is acknowledged in a file whose name a
//     crash could lose. This is raft-wal's fs.File's rule.
//   - Delete: unlink through the scheduler (sched.Scheduler.Unlinkat:
//     freeing a segment's blocks can wait for the disk), then the
//     directory's fsync, as raft-wal's fs.
//   - OpenReader, OpenWriter: diskio.OpenFile read-only, read-write.
//     ReadAt past the end is io.EOF, errors are os.File's *fs.PathError.
//   - ListDir: os.ReadDir, the directory's files by name (directories
//     left out; raft-wal's fs leaves empty names for them).
//
// # Two modes
//
// PageCache (the default) opens segments through the kernel's page cache,
// as raft-wal's own fs does: an append is a copy into the page cache on
// the caller, the commit's fsync writes it, a read of a cached entry is a
// copy on the caller (preadv2 RWF_NOWAIT); only the syncs and page-cache
// misses wait in the scheduler, as parked goroutines.
//
// Direct opens segments O_DIRECT where the filesystem allows. raft-wal
// reads every entry through a 64 KiB buffer at the entry's offset (its
// segment reader's minimum), and raft reads each entry back right after
// appending it (the leader to replicate it, followers to apply it): with
// O_DIRECT alone each of those reads is a 64 KiB read from the device,
// which leaves a cluster far behind raft-wal's own layer. So the direct mode
// keeps, per path, a cache of the segment's recent 256 KiB chunks
// (Options.TailCache, 4 MiB by default) that the VFS's writes update: a
// fresh segment's chunks are built from its writes and the zeros of its
// preallocation without reading the disk, and a reader (a sealed segment,
// a follower catching up) reads whole chunks. Writes are diskio's direct
// writes: whole pages O_DIRECT, a partial page at either end through the
// page cache with its exact bytes, so nothing is padded or read back.
// What the direct mode saves is the page cache's copy of the log: old
// entries (a follower far behind, a restart's replay of the log past the
// snapshot) come from the disk. The cache sees writes made through the
// VFS, not through other processes: raft-wal's directory belongs to one
// process.
//
// On systems other than Linux diskio's File is os.File, and so is this VFS.
package raftwal
