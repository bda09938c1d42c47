//go:build linux

package sched

const (
	SysURingEnter   Syscall = iota // io_uring_enter: submit, and wait if Wait
	SysIOSubmit                    // io_submit
	SysIOGetevents                 // io_getevents (waiting; reaping from the AIO ring is not a system call)
	SysEventfdWrite                // a producer waking the sleeping loop
	SysPread                       // on the caller: blocking backend, the idle fast path, a File in memory
	SysPwrite
	SysFsync
	SysFdatasync
	SysFallocate
	SysPreadv2  // a page-cache read with RWF_NOWAIT, on the caller's goroutine (ReadAtNowait)
	SysPwritev2 // on the caller, a write with RWF_* flags (RWF_NOWAIT: WriteAtNowait) or at the descriptor's offset
	SysUnlinkat
	SysSyncfs // the shared flush of a filesystem (flush_linux.go), on a caller
)

// SetDefaultTracer starts the process-wide scheduler (the one Default
// returns) now, with t as its Tracer, and reports true. If Default has
// already started it, it changes nothing and reports false: a running
// scheduler's tracer is fixed. Package diskio calls it for DISKIO_TRACE.
func SetDefaultTracer(t Tracer) bool {
	started := false
	defaultOnce.Do(func() {
		started = true
		startDefault(t)
	})
	return started
}
