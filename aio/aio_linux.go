//go:build linux

package aio

import (
	"math"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Context is an AIO context (aio_context_t), created by io_setup. Its
// methods may be called from several goroutines, except that only one may
// consume completions (Reap, Wait, GetEvents) at a time and Destroy must not
// race with anything.
type Context struct {
	// id is the aio_context_t. The kernel returns the user-space address
	// of the completion ring as the handle.
	id uint64
	// ring and events view the completion ring when user-space reaping is
	// possible; both are nil otherwise.
	ring   *aioRing
	events []IOEvent
	nr     int
}

// Setup creates a context able to hold at least nr requests in flight
// (io_setup). The kernel rounds the capacity up, so more may be accepted.
// The total over all contexts is capped by /proc/sys/fs/aio-max-nr; beyond
// it io_setup fails with EAGAIN. ENOSYS or EPERM mean AIO is not available
// (kernel without CONFIG_AIO, or a seccomp filter).
func Setup(nr int) (*Context, error) {
	if nr <= 0 || nr > math.MaxInt32 {
		return nil, os.NewSyscallError("io_setup", unix.EINVAL)
	}
	c := &Context{nr: nr}
	// io_setup requires *ctxp to be 0 on entry; c.id is.
	_, _, e := unix.Syscall(unix.SYS_IO_SETUP, uintptr(nr), uintptr(unsafe.Pointer(&c.id)), 0)
	if e != 0 {
		return nil, os.NewSyscallError("io_setup", e)
	}
	c.mapRing()
	return c, nil
}

// ID returns the kernel's context handle, aio_context_t.
func (c *Context) ID() uint64 { return c.id }

// Nr returns the capacity that was asked of Setup.
func (c *Context) Nr() int { return c.nr }

// Destroy cancels what it can, waits for all requests in flight to finish
// (io_destroy blocks until then), discards their completions, and unmaps the
// ring. Afterwards the buffers of those requests may be freed; every other
// method fails with EINVAL.
func (c *Context) Destroy() error {
	id := c.id
	// Drop the view of the ring first: after io_destroy it is unmapped.
	c.ring, c.events, c.id = nil, nil, 0
	_, _, e := unix.Syscall(unix.SYS_IO_DESTROY, uintptr(id), 0, 0)
	if e != 0 {
		return os.NewSyscallError("io_destroy", e)
	}
	return nil
}

// Submit queues iocbs with the kernel in one io_submit call and returns how
// many were accepted, which may be fewer than len(iocbs): the kernel takes at
// most as many as its ring has slots per call, and stops at the first IOCB it
// cannot accept, reporting only the ones before it. The caller must resubmit
// iocbs[n:] itself. If the very first IOCB is refused, Submit returns 0 and
// an *os.SyscallError:
//
//   - EAGAIN: the context has no free request slot: completions that have
//     not been reaped still hold theirs. Reap, then resubmit.
//   - EINVAL, EBADF, EOPNOTSUPP, EFAULT: iocbs[0] is malformed (bad opcode,
//     reserved field set, fd not open, RWF flags not supported by the file,
//     bad address).
//
// Errors found while starting the I/O, such as a misaligned O_DIRECT
// request or RWF_NOWAIT's EAGAIN, arrive instead as the res of the request's
// completion. EINTR from io_submit (nothing queued) is retried. The IOCBs themselves are copied by the kernel and may
// be reused as soon as Submit returns, except that Cancel identifies a
// request by the address of its IOCB.
func (c *Context) Submit(iocbs []*IOCB) (int, error) {
	if len(iocbs) == 0 {
		return 0, nil
	}
	for {
		r, _, e := unix.Syscall(unix.SYS_IO_SUBMIT, uintptr(c.id), uintptr(len(iocbs)), uintptr(unsafe.Pointer(&iocbs[0])))
		switch e {
		case 0:
			return int(r), nil
		case unix.EINTR:
			// Nothing was queued; trying again is safe.
			continue
		}
		return 0, os.NewSyscallError("io_submit", e)
	}
}

// GetEvents waits with io_getevents until at least minNr completions are
// available or timeout has passed, then stores up to len(events) of them and
// returns how many. A negative timeout waits without limit; zero does not
// wait. Interruptions by signals (EINTR, which the Go runtime causes often
// with its preemption signal) are retried with the time that remains, so a
// return with fewer than minNr events and a nil error means the timeout
// expired.
func (c *Context) GetEvents(minNr int, events []IOEvent, timeout time.Duration) (int, error) {
	if len(events) == 0 {
		return 0, nil
	}
	minNr = max(0, min(minNr, len(events)))
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	got := 0
	for {
		var n int
		var e unix.Errno
		if timeout < 0 {
			n, e = c.getevents(minNr-got, events[got:], nil)
		} else {
			ts := unix.NsecToTimespec(int64(timeout))
			n, e = c.getevents(minNr-got, events[got:], &ts)
		}
		switch e {
		case 0:
		case unix.EINTR:
			n = 0
		default:
			if got > 0 {
				// Do not lose events already taken off the ring;
				// a persistent error shows again on the next call.
				return got, nil
			}
			return 0, os.NewSyscallError("io_getevents", e)
		}
		got += n
		if got >= minNr || got == len(events) || timeout == 0 {
			return got, nil
		}
		if timeout > 0 {
			timeout = time.Until(deadline)
			if timeout <= 0 {
				return got, nil
			}
		}
	}
}

// getevents is one io_getevents call. ts nil waits without limit.
func (c *Context) getevents(minNr int, events []IOEvent, ts *unix.Timespec) (int, unix.Errno) {
	r, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, uintptr(c.id), uintptr(minNr), uintptr(len(events)),
		uintptr(unsafe.Pointer(&events[0])), uintptr(unsafe.Pointer(ts)), 0)
	return int(r), e
}

// Cancel asks the kernel to cancel the request submitted with cb, which must
// be the same IOCB, at the same address, that was passed to Submit. Only
// requests whose driver supports cancellation can be cancelled: IOCB_CMD_POLL
// and some device drivers (USB gadget), not reads, writes or syncs of regular
// files, for which Cancel returns EINVAL (the request is not cancellable, or
// already complete). Nil means cancellation has started (the kernel's
// EINPROGRESS): the request's completion, usually with res 0 or -ECANCELED,
// is still delivered and must still be reaped.
func (c *Context) Cancel(cb *IOCB) error {
	// Current kernels always deliver the completion through the ring and
	// ignore the result argument; give it valid memory all the same.
	var ev IOEvent
	_, _, e := unix.Syscall(unix.SYS_IO_CANCEL, uintptr(c.id), uintptr(unsafe.Pointer(cb)), uintptr(unsafe.Pointer(&ev)))
	switch e {
	case 0, unix.EINPROGRESS:
		return nil
	}
	return os.NewSyscallError("io_cancel", e)
}
