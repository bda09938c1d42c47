package sched

import (
	"time"
)

// SlowIO reports a request in flight longer than Options.SlowThreshold.
type SlowIO struct {
	Op    Op
	Fd    int32  // the descriptor
	Name  string // the file's name, if its opener gave one (SetName; diskio's Files do)
	Off   int64  // where the part still to transfer starts (reads and writes)
	Len   int    // bytes still to transfer (reads and writes)
	Class Class
	// Waited is how long the request has been in the kernel (since its
	// first submission) when reported.
	Waited time.Duration
	// Report counts the reports of this request: 1 at the threshold, 2 at
	// twice it, 3 at four times, and so on while it waits.
	Report int
}

// SlowTracer is a Tracer that also wants slow-request reports. Its SlowIO
// is called like Options.OnSlow.
type SlowTracer interface {
	SlowIO(ev SlowIO)
}

// DefaultSlowThreshold is Options.SlowThreshold's default: Pebble's disk
// health checks fire at 2s by default, CockroachDB's WAL failover at
// 100ms; a second names a stalling disk quickly without counting a slow
// but working one's queueing as a stall.
const DefaultSlowThreshold = time.Second
