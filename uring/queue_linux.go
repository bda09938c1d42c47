//go:build linux

package uring

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

var (
	// ErrBusy is returned by the Submit methods when io_uring_enter failed
	// with EAGAIN (the kernel could not allocate request memory) or EBUSY
	// (completions overflowed and could not be flushed to the CQ). What
	// was submitted is counted; the rest stays queued. Reap completions,
	// then submit again.
	ErrBusy = errors.New("uring: kernel busy (EAGAIN/EBUSY): reap completions, then submit again")

	// ErrCQEDropped is returned when io_uring_enter reported EBADR: the
	// kernel lost completions (it could not store an overflowed CQE). The
	// requests they belonged to will never complete; the owner must fail
	// them. Keeping in-flight requests at most CQEntries prevents it.
	ErrCQEDropped = errors.New("uring: completions were dropped by the kernel (EBADR)")
)

// GetSQE returns the next free SQE, zeroed, or nil when the SQ is full
// (submit, then try again). The SQE belongs to the caller until the next
// Submit.
func (r *Ring) GetSQE() *SQE {
	// The kernel advances the SQ head as it consumes SQEs (from another
	// thread with SQPOLL), so it is read with acquire semantics.
	if r.sqeTail-atomic.LoadUint32(r.sqHead) >= r.sqEntries {
		return nil
	}
	sqe := &r.sqes[r.sqeTail&r.sqMask]
	r.sqeTail++
	*sqe = SQE{}
	return sqe
}

// SQSpace returns how many SQEs GetSQE can hand out before the SQ is full.
func (r *Ring) SQSpace() uint32 { return r.sqEntries - (r.sqeTail - atomic.LoadUint32(r.sqHead)) }

// Pending returns how many prepared SQEs the kernel has not consumed yet.
func (r *Ring) Pending() uint32 { return r.sqeTail - atomic.LoadUint32(r.sqHead) }

// flushSQ publishes the prepared SQEs to the kernel and returns how many it
// has yet to consume. The tail store is a release (and on amd64 a full
// barrier): the SQE contents are visible before the kernel sees the tail.
func (r *Ring) flushSQ() uint32 {
	if tail := r.sqeTail; r.sqeHead != tail {
		r.sqeHead = tail
		atomic.StoreUint32(r.sqTail, tail)
	}
	return r.sqeTail - atomic.LoadUint32(r.sqHead)
}

// cqNeedsEnter reports that completions wait in the kernel, not in the CQ:
// on the overflow list, or as task work to run (IORING_SETUP_TASKRUN_FLAG).
func (r *Ring) cqNeedsEnter() bool {
	return atomic.LoadUint32(r.sqFlags)&(IORING_SQ_CQ_OVERFLOW|IORING_SQ_TASKRUN) != 0
}

// Submit hands every prepared SQE to the kernel with at most one
// io_uring_enter and returns how many the kernel consumed.
func (r *Ring) Submit() (int, error) { return r.submit(0, -1) }

// SubmitAndWait submits like Submit, then sleeps in the kernel until at
// least waitNr completions are in the CQ (at most the CQ's size). Signals
// do not end the wait.
func (r *Ring) SubmitAndWait(waitNr uint32) (int, error) { return r.submit(waitNr, -1) }

// SubmitAndWaitTimeout is SubmitAndWait that also returns after timeout
// (IORING_ENTER_EXT_ARG, Linux 5.11). Running out of time is not an error:
// the caller finds fewer completions than it asked for.
func (r *Ring) SubmitAndWaitTimeout(waitNr uint32, timeout time.Duration) (int, error) {
	if timeout < 0 {
		timeout = 0
	}
	return r.submit(waitNr, timeout)
}

func (r *Ring) submit(waitNr uint32, timeout time.Duration) (int, error) {
	var deadline time.Time
	if timeout >= 0 && waitNr > 0 {
		if r.features&IORING_FEAT_EXT_ARG == 0 {
			return 0, errors.New("uring: waiting with a timeout needs IORING_FEAT_EXT_ARG (Linux 5.11)")
		}
		deadline = time.Now().Add(timeout)
	}
	submitted := 0
	for {
		toSubmit := r.flushSQ()
		var flags uint32
		if r.flags&IORING_SETUP_SQPOLL != 0 {
			// The kernel thread consumes the SQ by itself; it needs
			// a system call only when it went to sleep.
			if toSubmit > 0 && atomic.LoadUint32(r.sqFlags)&IORING_SQ_NEED_WAKEUP != 0 {
				flags |= IORING_ENTER_SQ_WAKEUP
			}
			submitted += int(toSubmit)
			toSubmit = 0
		}
		if waitNr > 0 || r.flags&IORING_SETUP_IOPOLL != 0 || r.cqNeedsEnter() {
			flags |= IORING_ENTER_GETEVENTS
		}
		if toSubmit == 0 && flags == 0 {
			return submitted, nil
		}
		var argp unsafe.Pointer
		var argsz uintptr
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left < 0 {
				left = 0
			}
			r.ts = Timespec{Sec: int64(left / time.Second), Nsec: int64(left % time.Second)}
			r.arg = getEventsArg{Ts: uint64(uintptr(unsafe.Pointer(&r.ts)))}
			argp, argsz = unsafe.Pointer(&r.arg), unsafe.Sizeof(r.arg)
			flags |= IORING_ENTER_EXT_ARG
		}
		var n int
		var err error
		if waitNr == 0 && r.flags&IORING_SETUP_IOPOLL == 0 {
			n, err = r.enterRaw(toSubmit, flags)
		} else {
			n, err = r.Enter(toSubmit, waitNr, flags, argp, argsz)
		}
		if r.flags&IORING_SETUP_SQPOLL == 0 && n > 0 {
			submitted += n
		}
		switch err {
		case nil:
			// A signal that ends the wait is not reported when this
			// call submitted something (the kernel returns the
			// submitted count) or when some completions had arrived
			// (it returns 0). Wait on for what is missing, with the
			// time left.
			if waitNr > 0 && r.CQReady() < min(waitNr, r.cqEntries) && (deadline.IsZero() || time.Until(deadline) > 0) {
				continue
			}
			return submitted, nil
		case unix.ETIME:
			// The wait timed out; the CQ says what arrived.
			return submitted, nil
		case unix.EINTR:
			// A signal (the Go runtime preempts with SIGURG) ended
			// the wait. Nothing was lost: unconsumed SQEs are still
			// in the SQ and the wait is resumed with the time left.
			continue
		case unix.EAGAIN, unix.EBUSY:
			return submitted, ErrBusy
		case unix.EBADR:
			return submitted, ErrCQEDropped
		default:
			return submitted, os.NewSyscallError("io_uring_enter", err)
		}
	}
}

// Enter is the raw io_uring_enter system call: no retry, the errno is
// returned as is. Most owners want Submit and its variants instead.
func (r *Ring) Enter(toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argsz uintptr) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), uintptr(flags), uintptr(arg), argsz)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// enterRaw is Enter for a call that does not wait for completions,
// made without telling the Go runtime it is in a system call. Submission
// does not sleep: what would block goes to io_uring's workers. An
// ordinary system call lets the runtime take the caller's P when the
// thread is put aside on a busy CPU, and start another thread to run it;
// for a goroutine locked to its thread, getting a P back then costs a
// hand-off between threads as well.
func (r *Ring) enterRaw(toSubmit, flags uint32) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), 0, uintptr(flags), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// CQReady returns how many completions are in the CQ now.
func (r *Ring) CQReady() uint32 { return atomic.LoadUint32(r.cqTail) - *r.cqHead }

// ReapCQEs copies up to len(dst) completions into dst, frees their CQ slots
// with one head update, and returns how many it copied. When the kernel
// holds completions outside the CQ (the overflow list, or pending task work
// with IORING_SETUP_TASKRUN_FLAG), it asks the kernel to post them first
// (io_uring_enter with GETEVENTS and no wait), so that a CQ that overflowed
// still delivers every completion. It does not sleep.
func (r *Ring) ReapCQEs(dst []CQE) (int, error) {
	n := r.copyCQEs(dst)
	if n < len(dst) && r.cqNeedsEnter() {
		for {
			_, err := r.Enter(0, 0, IORING_ENTER_GETEVENTS, nil, 0)
			if err == unix.EINTR {
				continue
			}
			if err == unix.EBADR {
				return n, ErrCQEDropped
			}
			if err != nil && err != unix.EAGAIN && err != unix.EBUSY {
				return n, os.NewSyscallError("io_uring_enter", err)
			}
			break
		}
		n += r.copyCQEs(dst[n:])
	}
	return n, nil
}

func (r *Ring) copyCQEs(dst []CQE) int {
	head := *r.cqHead
	// Acquire: the CQE contents are read only after the tail that
	// covers them.
	ready := atomic.LoadUint32(r.cqTail) - head
	n := uint32(len(dst))
	if ready < n {
		n = ready
	}
	for i := uint32(0); i < n; i++ {
		dst[i] = r.cqes[(head+i)&r.cqMask]
	}
	if n > 0 {
		// Release: the slots are handed back after they were read.
		atomic.StoreUint32(r.cqHead, head+n)
	}
	return int(n)
}

// Err returns the completion's error: nil when Res >= 0, else the errno.
func (c CQE) Err() error {
	if c.Res >= 0 {
		return nil
	}
	return syscall.Errno(-c.Res)
}
