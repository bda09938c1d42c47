package diskio

import "github.com/diskio-go/diskio/sched"

// WithClass sets the I/O class of the file's requests through the
// scheduler (default sched.Unclassified): sched.Latency for what a caller
// is waiting on now (a write-ahead log's writes and syncs, foreground
// reads), sched.Background for work that only needs throughput
// (compaction and flush I/O, scans, prefetch). While latency-class
// requests wait, the scheduler bounds the background requests in flight,
// so a commit does not queue behind a scan (see sched.ClassOptions). On
// systems without a scheduler it does nothing.
func WithClass(c sched.Class) Option { return func(o *options) { o.class = c } }
