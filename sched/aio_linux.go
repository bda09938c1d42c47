//go:build linux

package sched

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/aio"
	"github.com/diskio-go/diskio/internal/sys"
)

// aioQueue drives one Linux AIO context. AIO is asynchronous only for
// O_DIRECT files: on buffered files io_submit does the I/O itself, so
// its submit time grows with the request's size.
// It has no NOP and no fallocate; the scheduler runs those on the caller.
type aioQueue struct {
	tracer  Tracer
	ctx     *aio.Context
	iocbs   []aio.IOCB  // by slot; the kernel copies them at io_submit
	pending []*aio.IOCB // prepared, not yet accepted by io_submit
	events  []aio.IOEvent
	got     int          // events taken by a waiting enter, not yet reaped
	refused []completion // requests io_submit refused outright, with the errno

	efd      int // the loop's eventfd, polled under wakeSlot
	wakeSlot uint32

	prio [NumClasses]uint16 // ioprio of each class's reads and writes (ClassOptions)
}

func newAIOQueue(entries int, tracer Tracer) (*aioQueue, error) {
	ctx, err := aio.Setup(entries)
	if err != nil {
		return nil, err
	}
	return &aioQueue{
		tracer:  tracer,
		ctx:     ctx,
		iocbs:   make([]aio.IOCB, entries),
		pending: make([]*aio.IOCB, 0, entries),
		events:  make([]aio.IOEvent, entries),
		// No slot is the wake slot until armWake names one.
		wakeSlot: ^uint32(0),
	}, nil
}

func (q *aioQueue) prepare(r *request, slot uint32) bool {
	cb := &q.iocbs[slot]
	switch r.op {
	case OpRead:
		cb.PrepPread(int(r.fd), r.remaining(), r.off+int64(r.done))
	case OpWrite:
		cb.PrepPwrite(int(r.fd), r.remaining(), r.off+int64(r.done))
		cb.RWFlags = int32(r.rwf)
	case OpFsync:
		cb.PrepFsync(int(r.fd))
	case OpFdatasync:
		cb.PrepFdsync(int(r.fd))
	default:
		panic("sched: aio cannot queue " + r.op.String())
	}
	if p := q.prio[r.class]; p != 0 && (r.op == OpRead || r.op == OpWrite) {
		cb.Flags |= aio.IOCB_FLAG_IOPRIO
		cb.Reqprio = int16(p)
	}
	cb.Data = uint64(slot)
	q.pending = append(q.pending, cb)
	return false
}

var errAIONoFixed = errors.New("sched: Linux AIO has no registered files or buffers")

func (q *aioQueue) registerFile(*File) error   { return errAIONoFixed }
func (q *aioQueue) unregisterFile(*File) error { return errAIONoFixed }

func (q *aioQueue) armWake(efd int, slot uint32) {
	// A poll does not consume the eventfd's counter; reap drains it when
	// the poll fires. Draining here instead would lose a wake-up: a
	// producer may have written after the loop announced its sleep and
	// before this poll is armed.
	q.efd, q.wakeSlot = efd, slot
	cb := &q.iocbs[slot]
	cb.PrepPoll(efd, unix.POLLIN)
	cb.Data = uint64(slot)
	q.pending = append(q.pending, cb)
}

func (q *aioQueue) submit() error {
	for len(q.pending) > 0 {
		var start int64
		if q.tracer != nil {
			start = Now()
		}
		n, err := q.ctx.Submit(q.pending)
		if q.tracer != nil {
			q.tracer.SyscallDone(SyscallEvent{Call: SysIOSubmit, Start: start, End: Now(), Submitted: n})
		}
		if err != nil {
			var errno unix.Errno
			if !errors.As(err, &errno) {
				return err
			}
			if errno == unix.EAGAIN {
				return nil // no room: reap, the loop submits again
			}
			// io_submit checks the first IOCB itself (bad fd,
			// unsupported flags, bad address): that request fails
			// with the errno, the others go on.
			q.refused = append(q.refused, completion{slot: uint32(q.pending[0].Data), res: -int32(errno)})
			n = 1
		}
		// io_submit stops at the first request it cannot start; the
		// rest stay queued for the next round.
		q.pending = append(q.pending[:0], q.pending[n:]...)
		if n == 0 {
			return nil
		}
	}
	return nil
}

func (q *aioQueue) enter(wait bool, limit time.Duration) error {
	if err := q.submit(); err != nil {
		return err
	}
	if !wait || q.got > 0 || len(q.refused) > 0 {
		return nil
	}
	timeout := limit
	if len(q.pending) > 0 && (timeout < 0 || timeout > time.Millisecond) {
		// io_submit said EAGAIN (the context's per-CPU request
		// accounting can say so below its size): do not sleep for
		// good on requests the kernel has not taken.
		timeout = time.Millisecond
	}
	var start int64
	if q.tracer != nil {
		start = Now()
	}
	n, err := q.ctx.Wait(1, q.events, timeout)
	if q.tracer != nil {
		q.tracer.SyscallDone(SyscallEvent{Call: SysIOGetevents, Start: start, End: Now(), Reaped: n, Wait: true})
	}
	q.got = n
	return err
}

func (q *aioQueue) reap(dst []completion) (int, error) {
	if len(q.refused) > 0 {
		n := copy(dst, q.refused)
		q.refused = append(q.refused[:0], q.refused[n:]...)
		return n, nil
	}
	n := q.got
	if n == 0 {
		var err error
		if n, err = q.ctx.Reap(q.events[:min(len(dst), len(q.events))]); err != nil {
			return 0, err
		}
	}
	q.got = 0
	for i, e := range q.events[:n] {
		dst[i] = completion{slot: uint32(e.Data), res: int32(e.Res)}
		if uint32(e.Data) == q.wakeSlot {
			// The poll fired: reset the counter before it is armed
			// again. The loop looks at its channel after this.
			var buf [8]byte
			sys.Read(q.efd, buf[:])
		}
	}
	return n, nil
}

func (q *aioQueue) close() error { return q.ctx.Destroy() }
