package sched

// Fallback is I/O that runs other than its program asked, without
// failing: a scheduler on a later backend than its first choice (Linux
// AIO, where reads and writes of page-cache files run synchronously inside
// io_submit; or blocking system calls on the callers' threads); a file
// opened for O_DIRECT (diskio.WithDirect(diskio.Direct)) that its
// filesystem refused, so that it runs buffered, through the page cache;
// or a regular file that no request of which can reach the scheduler
// (Plain: one its filesystem opened as a stream, without offsets), whose
// calls are its *os.File's. Options.OnFallback and a FallbackTracer
// (trace.Recorder is one) receive each once.
type Fallback struct {
	// Backend is the scheduler's backend.
	Backend Backend
	// Path is the file that runs buffered; empty for the scheduler's own
	// fallback.
	Path string
	// Plain says that the file at Path is served by its *os.File alone
	// (ReportPlain), not that it runs buffered.
	Plain bool
	// Reason says why: for the scheduler, FallbackReason (each skipped
	// backend and its error); for a file, the refusal.
	Reason string
}

func (f Fallback) String() string {
	if f.Path == "" {
		return "diskio: scheduler runs on " + string(f.Backend) + " (" + f.Reason + ")"
	}
	if f.Plain {
		return "diskio: " + f.Path + " runs as a plain *os.File, not through the scheduler (" + f.Reason + ")"
	}
	return "diskio: " + f.Path + " runs buffered, not O_DIRECT (" + f.Reason + ")"
}

// FallbackTracer is a Tracer that is also told of fallbacks (see
// Fallback), as Options.OnFallback is. Fallback is called on the
// goroutine that found it (the one calling New, or opening the file), and
// must not block.
type FallbackTracer interface {
	Tracer
	Fallback(fb Fallback)
}
