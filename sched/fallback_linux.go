//go:build linux

package sched

// ReportFallback passes fb to Options.OnFallback and to the Tracer if it
// is a FallbackTracer. The scheduler reports its own fallback (a backend
// other than its first choice) before New returns; package diskio reports
// each file opened with WithDirect(Direct) on this scheduler that the
// filesystem made run buffered. Packages that open files for a scheduler
// in the same way may report theirs. It is safe for concurrent use.
func (s *Scheduler) ReportFallback(fb Fallback) {
	if fb.Backend == "" {
		fb.Backend = s.backend
	}
	if fb.Path != "" {
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
		s.ReportFallback(Fallback{Backend: s.backend, Reason: s.reason})
	}
}
