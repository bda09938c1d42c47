// Package diskio is a drop-in replacement for *os.File whose reads, writes
// and syncs go through diskio's I/O scheduler (io_uring or Linux AIO, see
// package sched) on O_DIRECT files, instead of blocking an OS thread each.
//
// A File keeps byte-exact os.File semantics on top of O_DIRECT: any offset,
// any length, any buffer. Unaligned reads go through aligned bounce buffers;
// unaligned writes read, modify and write the edge blocks under a lock on
// the blocks they touch, so concurrent writers of different bytes of one
// block never lose each other's update; the logical size is tracked exactly
// and is the size on disk after Sync and Close. An unaligned write that grows
// the file writes whole blocks, so until the next Sync or Close the file on
// disk is longer than its logical size (zeros past it); in that window this
// File does not see size changes made through other descriptors. Otherwise
// it sees them, as os.File does. Where the filesystem refuses
// O_DIRECT, the file is opened buffered (still through the scheduler) and
// Direct reports it; WithDirect(DirectRequired) makes that an error instead.
//
// On systems other than Linux, File is a thin wrapper of *os.File.
package diskio
