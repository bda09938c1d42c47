//go:build linux

package sched

// Transfer slots: where a read or write runs when the backend cannot wait
// for it without a thread. Linux AIO makes a transfer of a file without
// O_DIRECT inside io_submit, on the loop's thread, and the blocking
// backend has no kernel queue at all: such a request is made on its
// caller's thread as os.File makes it, a blocking system call, but in
// one of maxTransfers slots, so that the threads held in those calls
// stay bounded where os.File's grow with the callers (to the runtime's
// limit of 10,000, where the process dies). A caller finding every slot
// taken waits for one, parked: it holds no thread.

// maxTransfers is how many transfers may hold their callers' threads at
// once on a backend that cannot wait for them. A page-cache miss keeps
// its thread for one device round trip; a device serves many at a time,
// and os.File's throughput grows with them up to a few dozen.
const maxTransfers = 64

// transferSlots bounds the transfers running on their callers: a
// counting semaphore, a token per slot.
type transferSlots chan struct{}

func newTransferSlots() transferSlots { return make(transferSlots, maxTransfers) }

// runTransfer runs r on its caller once it holds a transfer slot.
func (s *Scheduler) runTransfer(r *request) {
	s.transfers <- struct{}{}
	s.runInline(r)
	<-s.transfers
}
