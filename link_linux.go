package diskio

import (
	"github.com/diskio-go/diskio/internal/schedlink"
	"github.com/diskio-go/diskio/sched"
)

// link gives the scheduler calls only this package makes (page-cache
// attempts, RWF_* flags, the registered file table, names, the buffer
// cache), which sched does not export.
func link(s *sched.Scheduler) schedlink.Scheduler { return schedlink.Of(s) }
