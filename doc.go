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
// # Direct or page cache
//
// OpenFile uses O_DIRECT by default (DirectAuto): right for an engine
// that caches its own blocks, since every read goes to the disk and many
// reads in flight from many goroutines cost one scheduler thread. A file
// re-read through the kernel's page cache (configuration, a database at
// its usual settings, anything scanned sequentially) should be opened
// with WithDirect(PageCache): a read first copies what the page cache
// holds, on the caller's goroutine, with preadv2(RWF_NOWAIT), which never
// waits for the disk; what is not cached goes through the scheduler
// (io_uring reads buffered files asynchronously, without worker threads).
// Kernel read-ahead works as for os.File, Prefetch and Advise pass
// readahead(2) and posix_fadvise(2) through. Where the kernel refuses
// RWF_NOWAIT the file says so (Nowait) and sends every request through
// the scheduler; ext4 refuses it for writes, so buffered writes there go
// through the ring (its worker threads).
//
// Measured on the development VM (2 vCPU, ext4 on virtio, Linux 6.18,
// shared with other work: up to 50% CPU steal, so IOPS moved 2-3x between
// runs; CPU per operation is the steadier figure), with
// BenchmarkPageCache (buffered_bench_test.go) in alternating processes
// and the testbench's cache preset; the README has the runs:
//
//	                       hot file (in the page cache)      cold file (evicted)
//	4 KiB random, 1 gor.   PageCache: a copy on the caller,  PageCache, os.File and
//	                       1.1-1.3x os.File's CPU (2-3 µs)   DirectAuto: one disk read
//	                       DirectAuto: a disk read, 9.4k
//	                       IOPS, 31 µs CPU
//	4 KiB random, 128 g.   PageCache 5-6 OS threads,         PageCache 17-21 µs CPU, 7-8
//	                       os.File 10-18; DirectAuto as      threads, 0.9-1.7x os.File's
//	                       cold                              IOPS (23-30 µs, 68-133
//	                                                         threads); DirectAuto 8-11 µs,
//	                                                         6 threads
//	128 KiB scan           —                                 PageCache ~os.File (kernel
//	                                                         read-ahead); DirectAuto needs
//	                                                         a StreamReader
//	io.Copy, 4 MiB         PageCache 1.2x os.File's time     —
//	                       (median), DirectAuto ~100 ms (a
//	                       disk read per 8 KiB)
//
// So: hot data, or data read once in order, PageCache; random reads of
// data larger than memory, many in flight, or writes that must reach the
// disk, DirectAuto.
//
// On systems other than Linux, File is a thin wrapper of *os.File, and the
// scheduler and tracing API is there but does nothing.
package diskio
