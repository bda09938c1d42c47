package sched

import (
	"errors"
)

// ErrClosed is returned for requests made after Close.
var ErrClosed = errors.New("sched: scheduler closed")
