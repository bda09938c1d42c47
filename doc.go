// Package diskio is a drop-in replacement for *os.File whose disk waits
// go through diskio's I/O scheduler (io_uring or Linux AIO, see package
// sched) instead of blocking an OS thread each: however many goroutines
// wait for the disk, the process keeps a handful of threads.
//
//	f, err := diskio.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
//
// opens the file as os.OpenFile does and returns a *File with os.File's
// methods and os.File's results: the same bytes, counts, sizes, cursor
// and errors (*fs.PathError with os.File's Op, Path and errno).
//
// # The page cache, by default
//
// A File uses the kernel's page cache, as os.File does. What the cache
// can do at once is done on the caller's goroutine, at os.File's cost: a
// read the cache holds is one preadv2(RWF_NOWAIT) (which never waits for
// the disk), a write that reads nothing from the disk is one pwrite.
// Everything that may wait for the disk goes to the scheduler: a read of
// pages not cached, a write that must read a partial page in, Sync and
// Datasync (concurrent flushes share one device flush: group commit).
// The kernel's read-ahead works as for os.File. Opening a File costs one
// fstatfs beyond os.OpenFile's (the scheduler learns whether the file's
// data lives in memory), and a sysinfo more on tmpfs; nothing waits for
// the scheduler, and closing it is os.File's close.
//
// At most two WriteAt calls and one cursor Write per File are made on
// their callers' threads at a time (the kernel serialises buffered writes
// of a file anyway): other writers wait as parked goroutines, not as
// blocked threads. Where the filesystem takes RWF_NOWAIT writes (xfs,
// btrfs) a write first tries that; ext4 refuses them, and a File then
// decides from what it knows (the pages its last write covered, the size
// it knows) and, failing that, asks the page cache (cachestat).
//
// # O_DIRECT, when asked
//
// WithDirect(Direct) opens the file with O_DIRECT where the filesystem
// allows (Direct reports it): every read and write goes to the device,
// nothing is cached and nothing is read ahead. It is the choice of an
// engine that caches its own blocks and reads at random from many
// goroutines, where it wins most (see docs/ for the measurements);
// WithDirect(DirectRequired) fails where O_DIRECT is refused.
// Opening a direct File costs more than a page-cache one: an fstat (is
// it a regular file?), the open and fcntl of its O_DIRECT descriptor,
// the alignment's discovery (statx) and that descriptor's fstatfs.
// SetDefaultOptions(WithDirect(Direct)) makes it the default of every
// later open.
//
// A direct File keeps byte-exact os.File semantics: any offset, length and
// buffer. Aligned requests (File.Alignment) go to the device as they are;
// others are copied through aligned bounce buffers. Memory from
// ReadBuffer, ReadMany and the streams is aligned and returned without a
// copy. Other descriptors and processes see exactly what os.File would
// show them at every moment:
//
//   - Each direct File has two descriptors of the file: the caller's
//     (buffered, with the caller's flags, O_APPEND kept; Fd returns it)
//     and a second, O_DIRECT one for reads and whole-block writes.
//   - A write with a partial block at either end writes the pages holding
//     its ends through the buffered descriptor, with their exact bytes,
//     and only the whole pages between them with O_DIRECT. Nothing is
//     padded, nothing is truncated, nothing is read back.
//   - The kernel keeps the two paths coherent: a direct read or write of a
//     range first writes back and drops the page cache's pages there; no
//     buffered write of the File is in flight while a direct one is.
//
// In both modes an O_APPEND Write is the kernel's append: it lands whole
// at the end of the file as it is at that moment, across descriptors and
// processes. A File never asks the file's times (since Linux 6.13 that
// makes the next change take a fine-grained timestamp, a journaled inode
// update on ext4 at every write); sizes come from lseek or
// statx(STATX_SIZE).
//
// # Durability
//
// Sync is fsync and Datasync is fdatasync, with os.File's meaning: when
// either returns nil, every write that returned before it was called is
// on stable storage. Concurrent flushes of a File share one device flush
// (group commit). Once a flush of a File has failed, every later Sync or
// Datasync of it returns that first error without flushing again: the
// kernel reports a lost write-back once, and data it failed to write
// must not be taken as durable by a later flush.
// WriteAtDSync makes one write durable without a separate flush;
// SyncDir makes a directory's entries durable.
//
// # Threads
//
// Waits for the disk are parked goroutines. A process's OS threads stay
// near GOMAXPROCS plus the scheduler's loop and io_uring's capped workers
// (sched.Options.IOWQMaxWorkers, default 4), however many goroutines wait.
//
// # Lifetime and errors
//
// Close waits for the File's calls in progress and then closes its
// descriptors; calls made after it fail with os.ErrClosed inside a
// *fs.PathError, as os.File's. A kernel failure of a read or write
// (EIO, ENOSPC) is an *IOError wrapping the *fs.PathError os.File would
// return, with the range asked for.
//
// Files the runtime polls (FIFOs, pipes, terminals) are plain *os.File
// underneath and behave exactly as os.File does; so do directories and
// devices in the methods os.File lacks. Use OSFile, not
// os.NewFile(f.Fd(), ...), when code needs an *os.File.
//
// On systems other than Linux, File is a thin wrapper of *os.File, and the
// scheduler and tracing API is there but does nothing.
//
// # Environment
//
// On Linux the package reads these variables once, when it is
// initialised (trace_linux.go), to trace the process-wide scheduler
// without code changes (package trace says what the files hold):
//
//	DISKIO_TRACE              a path prefix: record from start-up and write
//	                          prefix.wait.pb.gz, prefix.syscalls.pb.gz,
//	                          prefix.trace.json, prefix.jsonl, prefix.txt
//	DISKIO_TRACE_EVERY        how often a goroutine rewrites them when
//	                          something new was recorded (default 1s; 0: never)
//	DISKIO_TRACE_SIGNALS      0: leave SIGINT and SIGTERM alone; otherwise
//	                          they are caught, the files written, and the
//	                          process dies of the signal as it would have
//	DISKIO_TRACE_RECORDS      the recorder's sizes (trace.Config's Records,
//	DISKIO_TRACE_STACKS       StackEvery, default 16, and Stacks)
//	DISKIO_TRACE_STACK_TABLE
//
// The companions count only with DISKIO_TRACE set. FlushTrace writes the
// files and ends the periodic writer and the signal handling. The
// process-wide scheduler itself takes DISKIO_BACKEND and
// DISKIO_IOWQ_MAX_WORKERS (package sched, "Environment").
package diskio
