//go:build linux

package main

import (
	"errors"

	"github.com/diskio-go/diskio/sched"
)

// openTrace starts the tracer -trace FILE asks for and returns it with a
// function that finishes the file. Every diskio run passes the tracer to
// its scheduler (sched.Options.Tracer, behind the syscall counter), so any
// sched.Tracer works here; os.File runs are not traced (they have no
// scheduler).
//
// The trace package is being written; when it exists this becomes, for
// example:
//
//	t := trace.New(trace.Options{})
//	return t, func() error { return t.WriteFile(path) }, nil
var openTrace = func(path string) (sched.Tracer, func() error, error) {
	return nil, nil, errors.New("-trace: the tracer (package trace) is not available in this build yet")
}
