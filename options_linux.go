//go:build linux

package diskio

import "github.com/diskio-go/diskio/sched"

type platformOptions struct {
	sched *sched.Scheduler
	class sched.Class
}

// WithScheduler sends the file's I/O through s instead of the process-wide
// default scheduler (sched.Default).
func WithScheduler(s *sched.Scheduler) Option { return func(o *options) { o.sched = s } }
