// Package powercut is a filesystem that loses what a power cut loses, and
// the power-cut tests of diskio that run on it.
//
// The filesystem (FS) is served over FUSE from memory. It holds two states
// of every file and directory: what a reader sees now, and what would be
// on the disk after a power cut. A write, a truncate, a fallocate changes
// only the first; FSYNC of a file (fsync(2), and fdatasync(2) alike: the
// model keeps no timestamps, so data and size are all there is) copies
// that file's data and size into the second, and FSYNCDIR copies a
// directory's entries. A create, link, rename, unlink, mkdir or rmdir is
// an entry change of its directory, durable only after that directory is
// synced: a file created, written and synced but whose directory was not
// synced vanishes at a cut, and a rename without a sync of the directory
// can come undone. FLUSH (sent at every close) and RELEASE make nothing
// durable, and neither does syncfs(2): the kernel sends a FUSE server
// no request for it (FUSE_SYNCFS is only sent on virtiofs mounts).
//
// Cut is the power cut: from that moment the mounted filesystem answers
// every request with EIO (a write that reaches it later is not applied),
// and what is not durable is dropped. With tearing, a file's unsynced
// pages each survive or not (a power cut during writeback leaves some
// pages written and others not, and a size either way), which a record's
// checksum must detect. Mount serves the state after the cut again, as a
// machine that came back up.
//
// The tests run diskio's File as a writer in a child process (the test
// binary again), cut the power at a random moment, kill the writer,
// remount and check that every operation the writer acknowledged (after
// the sync that made it durable) is there, counting the records torn by
// the cut. Each scenario has a variant that skips its syncs and must lose
// data. The number of cuts per scenario and mode is DISKIO_POWERCUT_CUTS.
//
// The package needs Linux, /dev/fuse and permission to mount (root, or
// fusermount3); its tests skip elsewhere, saying what is missing.
package powercut
