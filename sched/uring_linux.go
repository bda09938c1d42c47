//go:build linux

package sched

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/uring"
)

// uringQueue drives one io_uring. It is created by the loop goroutine, on
// its locked thread when SINGLE_ISSUER/DEFER_TASKRUN bind the ring to it.
type uringQueue struct {
	tracer  Tracer
	ring    *uring.Ring
	cqes    []uring.CQE
	wakeBuf []byte // 8 bytes outside the heap for the eventfd counter

	arena     *arena // registered as fixed buffer 0; nil when not registered
	freeSlots []uint32

	maxWorkers uring.MaxWorkers // the cap on io-wq workers, zero when none

	prio [NumClasses]uint16 // ioprio of each class's reads and writes (ClassOptions)

	unlinkat bool // the kernel has IORING_OP_UNLINKAT (Linux 5.11)
}

func newUringQueue(entries uint32, flags uint32, tracer Tracer) (*uringQueue, error) {
	// The CQ holds every request in flight plus the wake-up read, so it
	// can never overflow.
	r, err := uring.Setup(entries, &uring.Params{Flags: flags, CQEntries: 2 * entries, SQThreadCPU: -1})
	if err != nil {
		return nil, err
	}
	probe, err := checkOps(r)
	if err != nil {
		r.Close()
		return nil, err
	}
	wake, err := mem.Map(8)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &uringQueue{tracer: tracer, ring: r, cqes: make([]uring.CQE, 2*entries), wakeBuf: wake,
		unlinkat: probe.Supported(uring.IORING_OP_UNLINKAT)}, nil
}

// neededOps are the opcodes the loop submits: a ring without one of them
// (Linux 5.1-5.5 has no READ, WRITE or FALLOCATE) would fail every such
// request, so New falls back to the next backend instead.
var neededOps = [...]uring.Op{uring.IORING_OP_NOP, uring.IORING_OP_READ, uring.IORING_OP_WRITE,
	uring.IORING_OP_READ_FIXED, uring.IORING_OP_WRITE_FIXED, uring.IORING_OP_FSYNC, uring.IORING_OP_FALLOCATE}

// checkOps asks the kernel (IORING_REGISTER_PROBE, Linux 5.6) whether it
// implements every opcode in neededOps, and returns its answer.
func checkOps(r *uring.Ring) (*uring.Probe, error) {
	p, err := r.Probe()
	if err != nil {
		return nil, fmt.Errorf("%w (io_uring before Linux 5.6 lacks the READ and WRITE opcodes)", err)
	}
	var missing []string
	for _, op := range neededOps {
		if !p.Supported(op) {
			missing = append(missing, op.String())
		}
	}
	if missing != nil {
		return nil, fmt.Errorf("io_uring lacks opcodes %s", strings.Join(missing, ", "))
	}
	return p, nil
}

func (q *uringQueue) sqe() *uring.SQE {
	sqe := q.ring.GetSQE()
	if sqe == nil {
		// The loop bounds prepared work by the SQ size; running out
		// means that bound is broken, and silently dropping the
		// request would hang its caller forever.
		panic(fmt.Sprintf("sched: io_uring SQ full (%d entries)", q.ring.SQEntries()))
	}
	return sqe
}

func (q *uringQueue) prepare(r *request, slot uint32) (fixed bool) {
	sqe := q.sqe()
	switch r.op {
	case OpNop:
		sqe.PrepNop()
	case OpRead:
		if fixed = q.arena.contains(r.remaining()); fixed {
			sqe.PrepReadFixed(int(r.fd), r.remaining(), r.off+int64(r.done), 0)
		} else {
			sqe.PrepRead(int(r.fd), r.remaining(), r.off+int64(r.done))
		}
		sqe.Ioprio = q.prio[r.class]
	case OpWrite:
		if fixed = q.arena.contains(r.remaining()); fixed {
			sqe.PrepWriteFixed(int(r.fd), r.remaining(), r.off+int64(r.done), 0)
		} else {
			sqe.PrepWrite(int(r.fd), r.remaining(), r.off+int64(r.done))
		}
		sqe.OpFlags = r.rwf
		sqe.Ioprio = q.prio[r.class]
	case OpFsync:
		sqe.PrepFsync(int(r.fd), 0)
	case OpFdatasync:
		sqe.PrepFsync(int(r.fd), uring.IORING_FSYNC_DATASYNC)
	case OpFallocate:
		sqe.PrepFallocate(int(r.fd), r.mode, r.off, r.size)
	case OpUnlink:
		sqe.PrepUnlinkat(int(r.fd), r.buf, r.mode)
	}
	if r.file != nil && r.file.slot >= 0 {
		sqe.Fd = r.file.slot
		sqe.Flags |= uring.IOSQE_FIXED_FILE
	}
	sqe.UserData = uint64(slot)
	return fixed
}

// registerArena registers a as fixed buffer 0.
func (q *uringQueue) registerArena(a *arena) error {
	if err := q.ring.RegisterBuffers([][]byte{a.mem}); err != nil {
		return err
	}
	q.arena = a
	return nil
}

// registerFileTable registers an empty table of n files, filled later by
// registerFile.
func (q *uringQueue) registerFileTable(n int) error {
	fds := make([]int32, n)
	for i := range fds {
		fds[i] = -1
	}
	if err := q.ring.RegisterFiles(fds); err != nil {
		return err
	}
	q.freeSlots = make([]uint32, n)
	for i := range q.freeSlots {
		q.freeSlots[i] = uint32(n - 1 - i)
	}
	return nil
}

var (
	errNoFileTable = errors.New("sched: no registered file table (see Scheduler.Fixed)")
	errFileTable   = errors.New("sched: registered file table full")
)

// registerFile puts f in a free slot of the registered file table.
func (q *uringQueue) registerFile(f *File) error {
	if q.freeSlots == nil {
		return errNoFileTable
	}
	if f.slot >= 0 {
		return nil // already registered
	}
	if len(q.freeSlots) == 0 {
		return errFileTable
	}
	slot := q.freeSlots[len(q.freeSlots)-1]
	if _, err := q.ring.UpdateFiles(slot, []int32{f.fd}); err != nil {
		return err
	}
	q.freeSlots = q.freeSlots[:len(q.freeSlots)-1]
	f.slot = int32(slot)
	return nil
}

// unregisterFile empties f's slot, if it has one.
func (q *uringQueue) unregisterFile(f *File) error {
	if f.slot < 0 {
		return nil
	}
	// Requests already in flight keep their own reference to the file;
	// emptying the slot only affects requests prepared after this.
	if _, err := q.ring.UpdateFiles(uint32(f.slot), []int32{-1}); err != nil {
		return err
	}
	q.freeSlots = append(q.freeSlots, uint32(f.slot))
	f.slot = -1
	return nil
}

func (q *uringQueue) armWake(efd int, slot uint32) {
	sqe := q.sqe()
	sqe.PrepRead(efd, q.wakeBuf, 0)
	sqe.UserData = uint64(slot)
}

func (q *uringQueue) enter(wait bool, timeout time.Duration) error {
	var start int64
	if q.tracer != nil {
		start = Now()
	}
	var n int
	var err error
	switch {
	case wait && timeout >= 0 && q.ring.Features()&uring.IORING_FEAT_EXT_ARG != 0:
		// Linux 5.11+. Older kernels sleep until a completion, and
		// slow requests are checked only when one arrives.
		n, err = q.ring.SubmitAndWaitTimeout(1, timeout)
	case wait:
		n, err = q.ring.SubmitAndWait(1)
	default:
		n, err = q.ring.Submit()
	}
	if q.tracer != nil {
		q.tracer.SyscallDone(SyscallEvent{Call: SysURingEnter, Start: start, End: Now(), Submitted: n, Reaped: int(q.ring.CQReady()), Wait: wait})
	}
	return err
}

func (q *uringQueue) reap(dst []completion) (int, error) {
	n, err := q.ring.ReapCQEs(q.cqes[:min(len(dst), len(q.cqes))])
	for i, c := range q.cqes[:n] {
		dst[i] = completion{slot: uint32(c.UserData), res: c.Res}
	}
	return n, err
}

func (q *uringQueue) close() error {
	err := q.ring.Close()
	mem.Unmap(q.wakeBuf)
	return err
}
