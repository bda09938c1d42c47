//go:build !linux

package bench

import "time"

// Threads returns 0: counting OS threads needs Linux's /proc.
func Threads() int { return 0 }

// IOWorkers returns 0: io_uring is Linux's.
func IOWorkers() int { return 0 }

// CPUTime returns 0: process CPU time is read with Linux's getrusage here.
func CPUTime() time.Duration { return 0 }

// Tasks returns nil: listing threads needs Linux's /proc.
func Tasks() []string { return nil }

// ThreadsOf returns zeros: counting threads needs Linux's /proc.
func ThreadsOf(pid int) (threads, workers int) { return 0, 0 }
