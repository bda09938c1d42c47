//go:build !linux

package sched

import (
	"errors"
	"time"
)

// The scheduler needs Linux (io_uring or Linux AIO). Elsewhere the API
// is here, so that programs using it build everywhere, but no scheduler
// starts: New and Default fail with errors.ErrUnsupported, and diskio's
// Files do their I/O through os.File.

// Backend names a kernel interface a Scheduler can drive.
type Backend string

const (
	Auto     Backend = ""         // uring, else aio, else blocking
	URing    Backend = "uring"    // io_uring (Linux only)
	AIO      Backend = "aio"      // Linux AIO (Linux only)
	Blocking Backend = "blocking" // pread/pwrite on the caller's goroutine
)

// ErrClosed is returned for requests made after Close.
var ErrClosed = errors.New("sched: scheduler closed")

// Tracer receives the scheduler's events (trace.Recorder is one). On this
// system there are no events.
type Tracer interface{}

// Options configure a Scheduler; on this system no Scheduler starts.
type Options struct {
	Backend        Backend
	Entries        int
	Spin           time.Duration
	NoInline       bool
	Tracer         Tracer
	FixedBuffers   int
	FixedFiles     int
	IOWQMaxWorkers int
	Faults         FaultInjector
}

// FaultInjector injects failures for tests (Options.Faults). On this
// system there is no scheduler to inject into.
type FaultInjector interface{}

// Scheduler is diskio's I/O scheduler. On this system none exists.
type Scheduler struct{}

// New fails with errors.ErrUnsupported on this system.
func New(opts Options) (*Scheduler, error) {
	return nil, errors.ErrUnsupported
}

// Default fails with errors.ErrUnsupported on this system.
func Default() (*Scheduler, error) { return nil, errors.ErrUnsupported }

// Close does nothing (no Scheduler exists on this system).
func (s *Scheduler) Close() error { return nil }
