// Package diskio is a drop-in replacement for *os.File whose reads, writes
// and syncs go through diskio's I/O scheduler (io_uring or Linux AIO, see
// package sched) on O_DIRECT files, instead of blocking an OS thread each.
//
// A File keeps byte-exact os.File semantics on top of O_DIRECT: any offset,
// any length, any buffer. Unaligned reads go through aligned bounce buffers.
// Other descriptors and processes see exactly what os.File would show them,
// at every moment: a File never writes a byte past what it was given, so no
// reader ever sees padding or a size beyond the data, and Sync and Close
// never truncate (they would cut what another descriptor appended). The
// mechanism, chosen because the kernel keeps it coherent:
//
//   - Each File has two descriptors of the file:
//     the caller's (buffered, with the caller's flags, O_APPEND kept; Fd
//     returns it) and a second, O_DIRECT one for reads and whole-block
//     writes.
//   - Blocks below the size the kernel reports are written whole with
//     O_DIRECT; the bytes of a partial edge block the write does not cover
//     come from what the File knows: the last partial block of each
//     append stream is kept in memory, bytes past the highest offset
//     written are zeros on a file this File created, truncated or
//     preallocated, and SEEK_DATA finds holes and unwritten (fallocated)
//     extents. Only what is not known is read, a 256 KiB window at a time.
//   - The partial page at the end of a write that reaches past the
//     kernel's size is written with its exact length through the buffered
//     descriptor. A direct read or write of a range first writes back and
//     drops the page cache's pages of that range, so the two paths stay
//     coherent; writers lock whole pages, so no buffered write of this
//     File is in flight in a page its direct write covers.
//   - An O_APPEND Write is the kernel's append (RWF_APPEND on the buffered
//     descriptor): it lands whole at the end of the file as it is at that
//     moment, across descriptors and processes.
//   - Another descriptor's change is seen through the file's change time
//     (multigrain timestamps, Linux 6.13+, make every change after a stat
//     visible) and size: the File then forgets what it knew.
//
// Concurrent writers of different bytes of one page wait for each other
// instead of losing an update. Where the filesystem refuses O_DIRECT, the
// file is opened buffered (still through the scheduler) and Direct
// reports it; WithDirect(DirectRequired) makes that an error instead.
//
// On systems other than Linux, File is a thin wrapper of *os.File.
package diskio
