//go:build linux

package bench

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Threads returns the number of OS threads of the process, from the
// Threads: line of /proc/self/status (io_uring's kernel workers,
// iou-wrk-* and iou-sqp-*, are threads of the process too and count). It
// returns 0 if /proc cannot be read.
func Threads() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte("\nThreads:"))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil {
		return 0
	}
	return n
}

// IOWorkers returns how many of the process's threads are io_uring
// workers (io-wq, named iou-wrk-<tid of the submitting thread>), which run
// what io_uring cannot complete without blocking: fsync, fallocate,
// writes that extend a file, buffered writes. It reads one small /proc
// file per thread.
func IOWorkers() int {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return 0
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	n := 0
	for _, tid := range names {
		comm, err := os.ReadFile("/proc/self/task/" + tid + "/comm")
		if err == nil && bytes.HasPrefix(comm, []byte("iou-wrk-")) {
			n++
		}
	}
	return n
}

// CPUTime returns the user plus system CPU time the process has used
// (getrusage RUSAGE_SELF), all threads included.
func CPUTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
