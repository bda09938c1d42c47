//go:build !linux

package sched

import "errors"

// The scheduler needs Linux (io_uring or Linux AIO). Elsewhere the API
// is here, so that programs using it build everywhere, but no scheduler
// starts: New and Default fail with errors.ErrUnsupported, and diskio's
// Files do their I/O through os.File.

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
