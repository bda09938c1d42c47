//go:build linux

package sched

import "time"

// completion is one reaped result: the slot the request occupied and the
// kernel's result (bytes, or -errno).
type completion struct {
	slot uint32
	res  int32
}

// queue is what the event loop needs from a kernel interface: a place to
// prepare requests, one system call to submit them (and optionally sleep
// until something completes), and a way to take completions without a
// system call where the kernel allows it. One goroutine, the loop, owns a
// queue.
type queue interface {
	// prepare queues r (whose remaining bytes start at r.done) under
	// slot; the loop guarantees a free slot and SQ room. It reports
	// whether a registered buffer is used.
	prepare(r *request, slot uint32) (fixed bool)
	// armWake queues a read of the eventfd under slot, so that a
	// producer's write ends the loop's sleep.
	armWake(efd int, slot uint32)
	// enter is the queue's system call into the kernel (io_uring_enter;
	// on AIO io_submit, and io_getevents to wait): it submits what was
	// prepared; with wait it sleeps in the kernel until at least one
	// completion is available, or until timeout has passed when it is
	// not negative (then it may return with none).
	enter(wait bool, timeout time.Duration) error
	// reap copies available completions into dst without sleeping.
	reap(dst []completion) (int, error)
	// registerFile and unregisterFile add f to, and remove it from, the
	// kernel's table of registered files (io_uring only), keeping its
	// slot in f.
	registerFile(f *File) error
	unregisterFile(f *File) error
	// close releases the kernel object. The loop calls it only when
	// nothing is in flight.
	close() error
}
