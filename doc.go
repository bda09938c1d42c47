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
// write reads an edge block it partly covers only when the File does not
// know its bytes (below). Memory from
// ReadBuffer, ReadMany and the streams is aligned, and ReadBuffer and
// ReadMany return it without a copy.
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
//   - A write of whole blocks goes to the disk with O_DIRECT. A write with
//     a partial block at either end writes the pages holding its ends
//     through the buffered descriptor, with their exact bytes, and only
//     the whole pages between them with O_DIRECT. Nothing is padded and
//     nothing is read back: the page cache supplies the rest of an edge
//     page (the next append finds the page the last one left there; the
//     kernel zero-fills pages past the size or over unwritten extents,
//     and reads old data only where the file has some, as for os.File).
//   - A direct read or write of a range first writes back and drops the
//     page cache's pages of that range, so the two paths stay coherent;
//     no buffered write of this File is in flight while a direct one is.
//   - An O_APPEND Write is the kernel's append (RWF_APPEND on the buffered
//     descriptor): it lands whole at the end of the file as it is at that
//     moment, across descriptors and processes.
//   - The File keeps no copy of the file's bytes, so it never needs to
//     know what another descriptor changed, and it never asks the file's
//     times: since Linux 6.13 a stat makes the file's next change take a
//     fine-grained timestamp, a journaled inode update on ext4 at every
//     write (40 us per durable append here). Sizes come from
//     statx(STATX_SIZE).
//
// Concurrent writers of one page behave as they do on os.File: the kernel
// orders them. Where the filesystem refuses O_DIRECT, the
// file is opened buffered (still through the scheduler) and Direct
// reports it; WithDirect(DirectRequired) makes that an error instead.
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
// the scheduler; ext4 refuses it for writes, so a buffered write there
// is copied on the caller only when it reads nothing (up to 64 KiB, its
// partial pages cached or past the file's size: a log's appends) and
// goes through the ring (its worker threads) otherwise.
//
// Measured on the development VM (2 vCPU, ext4 on virtio, Linux 6.18,
// shared with other work: up to 50% CPU steal, so IOPS moved 2-3x between
// runs; CPU per operation is the steadier figure), with
// BenchmarkPageCache (buffered_bench_test.go) in alternating processes
// and the testbench's cache preset; the README has the runs:
//
//	                       hot file (in the page cache)      cold file (evicted)
//	4 KiB random, 1 gor.   PageCache: a copy on the caller,  PageCache, os.File and
//	                       1.0-1.1x os.File's CPU (1.6-1.7   DirectAuto: one disk read
//	                       µs; preadv2 costs ~0.15 µs more
//	                       than pread), 0.8-1.0x its IOPS
//	                       DirectAuto: a disk read, 9.4k
//	                       IOPS, 31 µs CPU
//	4 KiB random, 128 g.   PageCache 5-6 OS threads,         PageCache 9-10 µs CPU, 6
//	                       os.File 10-18; DirectAuto as      threads, 1.9-2.3x os.File's
//	                       cold                              IOPS (14-19 µs, 8-52
//	                                                         threads); DirectAuto 8-11 µs,
//	                                                         6 threads
//	128 KiB scan           —                                 PageCache ~os.File (kernel
//	                                                         read-ahead); DirectAuto needs
//	                                                         a StreamReader
//	io.Copy, 4 MiB         PageCache 0.36-0.45x os.File's    —
//	                       time (256 KiB reads on the caller),
//	                       DirectAuto ~100 ms (disk reads)
//
// So: hot data, or data read once in order, PageCache; random reads of
// data larger than memory, many in flight, or writes that must reach the
// disk, DirectAuto.
//
// On systems other than Linux, File is a thin wrapper of *os.File, and the
// scheduler and tracing API is there but does nothing.
package diskio
