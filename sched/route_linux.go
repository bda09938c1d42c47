//go:build linux

package sched

import (
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// place is where a request runs: on its caller's thread (in one of the
// bounded places for it, or at once), or through the loop.
type place uint8

const (
	// viaLoop: the loop submits it to the kernel queue and wakes the
	// caller on its completion.
	viaLoop place = iota
	// viaLoopNowait: through the loop with RWF_NOWAIT; what the kernel
	// could not start without blocking comes back, and its caller
	// makes the rest in a slot for blocking work.
	viaLoopNowait
	// onCallerNow: at once on its caller, as os.File would, holding no
	// slot: it waits for no device, or the backend has no opcode for it.
	onCallerNow
	// onInlineSlot: on its caller in one of the maxInline slots of the
	// idle fast path, which route has taken for it.
	onInlineSlot
	// onBlockingSlot: on its caller in a slot for blocking work
	// (caller_linux.go), waiting parked for one.
	onBlockingSlot
	// onTransferSlot: on its caller in a transfer slot
	// (transferSlots), waiting parked for one.
	onTransferSlot
)

// route decides where r runs, and for onInlineSlot takes the slot; it is
// the scheduler's whole policy, from r and the scheduler's state, in this
// order (a page-cache File's reads and writes try the cache on their
// callers first, File.ReadAtNowait, WriteAtNowait or WriteAtInline, and
// send only the rest; its single-range ReadMany and one-deep StreamReader
// come here whole; a request of the blocking backend has run on its caller
// in admit, a read or write in a transfer slot):
//
//  1. A read or write of a File whose data lives in memory (tmpfs): at
//     once on the caller, as os.File would. It waits for no device, so it
//     holds its thread no longer than the copy, and a ring could only add
//     a round trip (io_uring hands tmpfs reads to its workers).
//  2. On Linux AIO, what AIO has no opcode for (NOP, fallocate, unlink):
//     at once on the caller.
//  3. On Linux AIO, a read or write of a file without O_DIRECT: in a
//     transfer slot on its caller. AIO makes such a transfer inside
//     io_submit, on the loop's thread, so a page-cache miss there would
//     hold up every other request of the process behind it.
//  4. The idle fast path: while nothing is in flight, or for latency-class
//     syncs that must not queue behind background work, on the caller's
//     thread in one of maxInline caller slots (caller_linux.go), if one is
//     free; never syncs and other blocking work on io_uring, which have
//     slots of their own (5).
//  5. On io_uring, work the ring would hand to a worker (syncs,
//     fallocate, unlink, and writes of classified files whose writes come
//     back from the ring): in a slot for blocking work on the caller,
//     until the loop has locked itself to its thread and the ring's capped
//     worker pool takes it (caller_linux.go). A classified write of
//     another file goes through the loop with RWF_NOWAIT.
//  6. Everything else: through the loop.
func (s *Scheduler) route(r *request) (place, *callerSlot) {
	if r.transfer() && r.file != nil && r.file.inMemory {
		return onCallerNow, nil
	}
	if s.backend == AIO && (r.op == OpNop || r.op == OpFallocate || r.op == OpUnlink) {
		return onCallerNow, nil
	}
	if s.transferNeedsThread(r) {
		return onTransferSlot, nil
	}
	// Work io_uring would hand to a worker has slots of its own (or
	// the workers), which bound its threads; it does not take these
	// too, or both would hold threads at once (caller_linux.go).
	ownSlots := s.workOnCaller && blocksWorker(r.op)
	if !s.noInline && !ownSlots && (s.active.Load() == 0 || s.latencyOnCaller(r)) {
		if p := s.takeSlot(); p != nil {
			return onInlineSlot, p
		}
	}
	if s.workOnCaller && !s.locked.Load() {
		// Once the loop has locked itself for an unclassified write
		// that may go to a worker, the ring has its worker pool, and
		// work for it adds no thread beyond the cap: it goes there.
		classified := r.op == OpWrite && r.class != Unclassified
		if blocksWorker(r.op) || classified && r.file.skipRing() {
			return onBlockingSlot, nil
		}
		if classified {
			return viaLoopNowait, nil
		}
	}
	return viaLoop, nil
}

// transferNeedsThread reports whether r is a read or write that the
// backend would make synchronously: on Linux AIO, one of a file without
// O_DIRECT (io_submit makes it on the loop's thread).
func (s *Scheduler) transferNeedsThread(r *request) bool {
	return s.backend == AIO && r.transfer() && !r.direct()
}

// transfer reports whether r moves bytes: a read or a write.
func (r *request) transfer() bool { return r.op == OpRead || r.op == OpWrite }

// direct reports whether r's descriptor is open with O_DIRECT: its File's
// flag, or for a request by descriptor number, the descriptor's.
func (r *request) direct() bool {
	if r.file != nil {
		return r.file.direct
	}
	return isDirect(int(r.fd))
}

// isDirect reports whether fd is open with O_DIRECT. A descriptor whose
// flags cannot be read is taken for one: its request then goes to the
// kernel queue, which reports the error.
func isDirect(fd int) bool {
	fl, err := sys.Fcntl(fd, unix.F_GETFL, 0)
	return err != nil || fl&unix.O_DIRECT != 0
}
