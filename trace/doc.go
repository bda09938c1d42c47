// Package trace is diskio's I/O tracer: it records every system call the
// scheduler makes and every request's timeline, and exports them to the
// tools Go developers already use.
//
// # Recording
//
// A Recorder implements sched.Tracer. It keeps fixed-size records (64
// bytes, one cache line) in a ring allocated up front: a writer takes a
// ticket from one atomic counter, claims the ticket's slot with a
// compare-and-swap of the slot's sequence word, stores the record's words
// and publishes it. No lock, no allocation, and errors are kept as errno
// numbers, not error values. When the ring is full the newest records
// overwrite the oldest, and snapshots say how many were dropped. Snapshots
// may be taken while the recorder records.
//
// A system call record holds the call (io_uring_enter, io_submit,
// io_getevents, an eventfd write waking the loop, or a blocking pread,
// pwrite, fsync...), its start and duration, the requests it submitted
// and the completions ready after it. A request record holds the op, fd,
// offset, length, bytes done, backend, whether it used a registered
// buffer or ran inline, the errno, and four times: enqueued by the
// caller, submitted to the kernel, completion reaped, caller running
// again. With Config.StackEvery the caller's stack is taken every N
// requests (on the caller's goroutine, into fixed arrays of PCs).
//
// # Exports
//
// From a Snapshot: WaitProfile, a pprof profile of who waited on disk
// (count and wait time on the callers' stacks: go tool pprof -http=:
// draws the flame graph); SyscallProfile; WriteChrome, the trace-event
// JSON that ui.perfetto.dev and chrome://tracing open (the loop's system
// calls on one track, each request as a span with its queued, kernel and
// wake-up phases); WriteJSONLines; WriteSummary, latency percentiles per
// op and size, the queueing/kernel/wake-up split, system calls per
// request and mean batch size; WriteFiles, all of them at once.
//
// # Ways in
//
//   - In code: sched.Options{Tracer: trace.New(trace.Config{})} for a
//     scheduler of your own, or diskio.StartTracing for the process-wide
//     one that Files use, before the first file is opened.
//   - Without code changes: DISKIO_TRACE=/path/prefix makes any program
//     that imports diskio record from start-up and write
//     prefix.wait.pb.gz, prefix.syscalls.pb.gz, prefix.trace.json,
//     prefix.jsonl and prefix.txt. Go runs nothing at exit, so the files
//     are written (1) when the process gets SIGINT or SIGTERM, after which
//     it dies of the signal as it would have (DISKIO_TRACE_SIGNALS=0 turns
//     this off, for programs that handle those signals themselves: they
//     should call diskio.FlushTrace); (2) every DISKIO_TRACE_EVERY
//     (default 1s, 0 for never) if anything new was recorded, so a program
//     that returns from main or calls os.Exit loses at most that last
//     interval; (3) whenever the program calls diskio.FlushTrace. Each file
//     is replaced atomically. DISKIO_TRACE_RECORDS sizes the ring (default
//     65536 records, 4 MiB), DISKIO_TRACE_STACKS is the stack sampling
//     period (default 16; 0 for none).
//   - From a running server: package tracehttp serves captures of N
//     seconds on demand, like net/http/pprof.
//
// # Cost
//
// Without a Tracer the scheduler reads no clock and makes no call. A
// Recorder takes 35-50ns per record (BenchmarkRecord, two goroutines
// into one ring); a sampled stack about 300ns more. With a Recorder (no
// stacks), 4 KiB random O_DIRECT reads from 128 goroutines kept their IOPS
// within the disk's noise (on/off 1.00-1.08 over whole runs) and cost 5%
// more CPU per read (~280ns, half of it the scheduler's clock reads), with
// 0 allocations per read (BenchmarkTracingCost; details in its comment).
package trace
