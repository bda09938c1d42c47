//go:build linux

package sched

import (
	"fmt"

	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/uring"
)

// uringQueue drives one io_uring. It is created on the loop's locked thread
// so that SINGLE_ISSUER/DEFER_TASKRUN bind the ring to that thread.
type uringQueue struct {
	tracer  Tracer
	ring    *uring.Ring
	cqes    []uring.CQE
	wakeBuf []byte // 8 bytes outside the heap for the eventfd counter
}

func newUringQueue(entries uint32, flags uint32, tracer Tracer) (*uringQueue, error) {
	// The CQ holds every request in flight plus the wake-up read, so it
	// can never overflow.
	r, err := uring.Setup(entries, &uring.Params{Flags: flags, CQEntries: 2 * entries, SQThreadCPU: -1})
	if err != nil {
		return nil, err
	}
	wake, err := mem.Map(8)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &uringQueue{tracer: tracer, ring: r, cqes: make([]uring.CQE, 2*entries), wakeBuf: wake}, nil
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

func (q *uringQueue) prepare(r *request, slot uint32) {
	sqe := q.sqe()
	switch r.op {
	case OpNop:
		sqe.PrepNop()
	case OpRead:
		sqe.PrepRead(int(r.fd), r.remaining(), r.off+int64(r.done))
	case OpWrite:
		sqe.PrepWrite(int(r.fd), r.remaining(), r.off+int64(r.done))
	case OpFsync:
		sqe.PrepFsync(int(r.fd), 0)
	case OpFdatasync:
		sqe.PrepFsync(int(r.fd), uring.IORING_FSYNC_DATASYNC)
	case OpFallocate:
		sqe.PrepFallocate(int(r.fd), r.mode, r.off, r.size)
	}
	sqe.UserData = uint64(slot)
}

func (q *uringQueue) armWake(efd int, slot uint32) {
	sqe := q.sqe()
	sqe.PrepRead(efd, q.wakeBuf, 0)
	sqe.UserData = uint64(slot)
}

func (q *uringQueue) enter(wait bool) error {
	var start int64
	if q.tracer != nil {
		start = Now()
	}
	var n int
	var err error
	if wait {
		n, err = q.ring.SubmitAndWait(1)
	} else {
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
