// Package trace is diskio's I/O tracer: it records every system call the
// scheduler makes and every request's timeline, and exports them to the
// tools Go developers already use.
//
// # Recording
//
// A Recorder implements sched.Tracer. It keeps two things, both in memory
// fixed at New:
//
//   - Totals of every event, counted in place for the whole run: per op
//     and size class, the count, errors, bytes, a latency histogram and
//     the queued/kernel/wake-up sums; per system call, the count, time,
//     and requests submitted and reaped; and with Config.StackEvery, the
//     caller's stack of every StackEvery-th request (taken on the
//     caller's goroutine), added to its entry in a table of distinct
//     stacks. The summary and the two profiles come from these, so they
//     cover the whole run however long it is. A sample whose stack is new
//     once the table is full is dropped and counted.
//   - A timeline of the latest records, fixed-size (64 bytes, one cache
//     line) in a ring: a writer takes a ticket from one atomic counter,
//     claims the ticket's slot with a compare-and-swap of the slot's
//     sequence word, stores the record's words and publishes it. When the
//     ring is full the newest records overwrite the oldest, and snapshots
//     count them as dropped. The Chrome trace and the JSON lines come
//     from it, and cover only what it holds.
//
// No lock and no allocation on the way (but the first request of each op
// and size class, which allocates its histograms, 20 KiB); errors are kept
// as errno numbers, not error values. Snapshots may be taken while the
// recorder records; each says the span its totals cover (Start to End),
// the part of it its timeline holds, and every drop.
//
// A system call record holds the call (io_uring_enter, io_submit,
// io_getevents, an eventfd write waking the loop, or a blocking pread,
// pwrite, fsync...), its start and duration, the requests it submitted
// and the completions ready after it. A request record holds the op, fd,
// offset, length, bytes done, backend, whether it used a registered
// buffer or ran inline, the errno, and four times: enqueued by the
// caller, submitted to the kernel, completion reaped, caller running
// again.
//
// A Recorder is also a sched.FallbackTracer: the summary names the
// backends the requests ran on, a scheduler's fallback from io_uring (to
// Linux AIO, where page-cache reads and writes run synchronously, or to
// blocking calls) and its reason, and each file that asked for O_DIRECT
// and runs buffered. Without a tracer, sched.Options.OnFallback reports
// the same.
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
//     prefix.jsonl and prefix.txt (the summary, which ends with each
//     file's size). Go runs nothing at exit, so the files are written (1)
//     when the process gets SIGINT or SIGTERM, after which it dies of the
//     signal as it would have (DISKIO_TRACE_SIGNALS=0 turns this off, for
//     programs that handle those signals themselves: they should call
//     diskio.FlushTrace); (2) every DISKIO_TRACE_EVERY (default 1s, 0 for
//     never) if anything new was recorded, so a program that returns from
//     main or calls os.Exit loses at most that last interval; (3)
//     whenever the program calls diskio.FlushTrace, which also ends (1)
//     and (2). Each file is replaced atomically. Variables size what it
//     keeps (see Sizes); package diskio lists them all.
//   - From a running server: package tracehttp serves captures of N
//     seconds on demand, like net/http/pprof.
//
// # Sizes
//
// What a Recorder keeps, and the variables that set it for DISKIO_TRACE:
//
//	DISKIO_TRACE_RECORDS      the timeline ring, in records (Config.Records;
//	                          default 65536: 4 MiB of memory, the last
//	                          65,536 requests and system calls, about
//	                          20 MB of trace.json and 12 MB of jsonl)
//	DISKIO_TRACE_STACKS       the stack sampling period (Config.StackEvery;
//	                          default 16, 0 for none)
//	DISKIO_TRACE_STACK_TABLE  distinct stacks kept for the wait profile
//	                          (Config.Stacks; default 4096: 1.3 MiB)
//
// The totals take 32 KiB, and 20 KiB per op and size class seen. A run of
// minutes at hundreds of thousands of requests a second keeps its whole
// summary and profiles in that memory; the timeline holds the last
// fraction of a second of such a run (the summary says how much).
//
// # Cost
//
// Without a Tracer the scheduler makes no call to one. A Recorder keeps
// each request and system call as a ring record and in the totals,
// without allocating, and samples a stack for one request in StackEvery.
// That costs far less than a disk read, and is felt against a page-cache
// hit of about a microsecond, the worst case. BenchmarkRecord and
// BenchmarkTracingCost measure it; the figures are in
// docs/notes/2026-11-25-tracer.md and docs/notes/2026-11-28-design-figures.md.
package trace
