//go:build linux

package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/diskio-go/diskio/sched"
)

// threadsCell is the table's thread column: every thread of the process,
// and how many of them were io_uring's workers (iou-wrk) when there were
// any.
func threadsCell(r Result) string {
	if r.WorkersPeak > 0 {
		return fmt.Sprintf("%d (%d iou-wrk)", r.ThreadsPeak, r.WorkersPeak)
	}
	return strconv.Itoa(r.ThreadsPeak)
}

// workersReport says what cap on io_uring's worker threads the kernel
// accepted for a scheduler with the default options
// (Options.IOWQMaxWorkers's default).
func workersReport(w io.Writer) {
	s, err := sched.New(sched.Options{Backend: sched.URing, FixedBuffers: -1, FixedFiles: -1})
	if err != nil {
		return // the io_uring line above says why
	}
	defer s.Close()
	fmt.Fprintf(w, "diskio/uring: %s\n", s.Fixed().Workers)
}
