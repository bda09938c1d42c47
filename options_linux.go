//go:build linux

package diskio

import "github.com/diskio-go/diskio/sched"

type platformOptions struct {
	sched  *sched.Scheduler
	class  sched.Class
	tuning tuning
}

// tuning turns off paths the benchmarks compare against; package tests
// set it with an Option of their own, so no package variable is flipped
// while other Files run.
type tuning struct {
	noInlineWrites bool // small page-cache writes go through the scheduler (BenchmarkSmallWrites)
	twoTrips       bool // no durable write in one trip (BenchmarkWALAppend)
}

// WithScheduler sends the file's I/O through s instead of the process-wide
// default scheduler (sched.Default).
func WithScheduler(s *sched.Scheduler) Option { return func(o *options) { o.sched = s } }
