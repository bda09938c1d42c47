// Package diskio is a drop-in replacement for *os.File whose reads, writes
// and syncs go through diskio's I/O scheduler (io_uring or Linux AIO, see
// package sched) on O_DIRECT files, instead of blocking an OS thread each.
//
// O_DIRECT bypasses the page cache: every read goes to the device (nothing
// is cached for the next reader, and there is no kernel read-ahead; use a
// StreamReader to scan), and every write goes to the device before it
// completes (Sync still makes it durable). Direct I/O works in blocks:
// offsets and lengths must be multiples of the device's logical block
// (512 B or 4 KiB) and memory addresses of the memory alignment.
// File.Alignment reports the larger of the two. A File accepts any offset,
// length and buffer anyway; aligned ones go to the device as they are,
// others are copied through an aligned bounce buffer, and an unaligned
// write also reads the edge blocks it partly covers. Memory from
// ReadBuffer, ReadMany and the streams is aligned, and ReadBuffer and
// ReadMany return it without a copy.
//
// A File keeps byte-exact os.File semantics on top of O_DIRECT. Unaligned
// writes read, modify and write the edge blocks under a lock on the blocks
// they touch, so concurrent writers of different bytes of one block never
// lose each other's update; the logical size is tracked exactly and is the
// size on disk after Sync and Close. An unaligned write that grows the
// file writes whole blocks, so until the next Sync or Close the file on
// disk is longer than its logical size (zeros past it); in that window
// this File does not see size changes made through other descriptors.
// Otherwise it sees them, as os.File does. Where the filesystem refuses
// O_DIRECT (tmpfs), the file is opened buffered (still through the
// scheduler) and Direct reports it; WithDirect(DirectRequired) makes that
// an error instead.
//
// Files that are not regular files (FIFOs, pipes, devices, directories)
// are plain *os.File underneath, and behave exactly as os.File does. Use
// OSFile, not os.NewFile(f.Fd(), ...), when code needs an *os.File.
//
// On systems other than Linux, File is a thin wrapper of *os.File, and the
// scheduler and tracing API is there but does nothing.
package diskio
