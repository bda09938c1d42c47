//go:build !linux

package diskio

import "github.com/diskio-go/diskio/sched"

type platformOptions struct {
	class sched.Class // WithClass: nothing to schedule here
}

// WithScheduler sends the file's I/O through s instead of the process-wide
// default scheduler. On this system there is no scheduler (sched.New
// fails), and Files do their I/O through os.File: it does nothing.
func WithScheduler(s *sched.Scheduler) Option { return func(o *options) {} }

// SchedulerOf returns the scheduler Files opened with opts use. On this
// system there is none: it returns sched.Default's error.
func SchedulerOf(opts ...Option) (*sched.Scheduler, error) { return sched.Default() }
