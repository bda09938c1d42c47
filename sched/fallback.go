package sched

// Fallback is I/O that runs other than its program asked, without
// failing: a scheduler on a later backend than its first choice (Linux
// AIO, where reads and writes of page-cache files run synchronously inside
// io_submit; or blocking system calls on the callers' threads), or a file
// opened for O_DIRECT (diskio.WithDirect(diskio.Direct)) that its
// filesystem refused, so that it runs buffered, through the page cache.
// Options.OnFallback and a FallbackTracer (trace.Recorder is one) receive
// each once.
type Fallback struct {
	// Backend is the scheduler's backend.
	Backend Backend
	// Path is the file that runs buffered; empty for the scheduler's own
	// fallback.
	Path string
	// Reason says why: for the scheduler, FallbackReason (each skipped
	// backend and its error); for a file, the refusal.
	Reason string
}

func (f Fallback) String() string {
	if f.Path == "" {
		return "diskio: scheduler runs on " + string(f.Backend) + " (" + f.Reason + ")"
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
