//go:build linux

package sched

// ReportBuffered reports that the File, which was to use O_DIRECT, runs
// buffered, and why: a Fallback with the File's name as its Path, passed
// to Options.OnFallback and to the Tracer if it is a FallbackTracer, and
// counted in Stats.Fallbacks. Package diskio reports each file opened with
// WithDirect(Direct) that the filesystem made run buffered. It is safe for
// concurrent use.
func (f *File) ReportBuffered(reason string) {
	f.s.reportFallback(Fallback{Path: f.name, Reason: reason})
}

// ReportPlain reports that the regular file at path is served by its
// *os.File alone, so that none of its I/O reaches the scheduler, and why:
// a Fallback with Plain set, passed to Options.OnFallback and to the
// Tracer if it is a FallbackTracer (not counted in Stats.Fallbacks).
// Package diskio reports each regular file it opens that way. It is safe
// for concurrent use.
func (s *Scheduler) ReportPlain(path, reason string) {
	s.reportFallback(Fallback{Path: path, Plain: true, Reason: reason})
}

// reportFallback passes fb to Options.OnFallback and to the Tracer if it
// is a FallbackTracer: the scheduler's own fallback (a backend other than
// its first choice), reported before New returns, and its Files'.
func (s *Scheduler) reportFallback(fb Fallback) {
	if fb.Backend == "" {
		fb.Backend = s.backend
	}
	if fb.Path != "" && !fb.Plain {
		s.stats.fallbacks.Add(1)
	}
	if ft, ok := s.tracer.(FallbackTracer); ok {
		ft.Fallback(fb)
	}
	if s.onFallback != nil {
		s.onFallback(fb)
	}
}

// reportStart reports the scheduler's own fallback, if it has one.
func (s *Scheduler) reportStart() {
	if s.reason != "" {
		s.reportFallback(Fallback{Backend: s.backend, Reason: s.reason})
	}
}
