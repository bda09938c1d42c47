//go:build linux

package aio

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// mapRing looks at the ring the context handle points to and keeps a view of
// it if user space may consume events from it: the magic number must match
// and no incompatible feature may be set, or the layout is not the one this
// code knows.
func (c *Context) mapRing() {
	// The handle is the ring's address. Reinterpret a word holding it as a
	// pointer rather than converting uintptr to unsafe.Pointer (which vet
	// rightly distrusts): the memory was mapped by the kernel, outside the
	// Go heap, and never moves.
	addr := uintptr(c.id)
	r := *(**aioRing)(unsafe.Pointer(&addr))
	if r == nil || r.magic != AIO_RING_MAGIC || r.incompatFeatures != AIO_RING_INCOMPAT_FEATURES ||
		r.headerLength != uint32(unsafe.Sizeof(aioRing{})) || r.nr == 0 {
		return
	}
	c.ring = r
	c.events = unsafe.Slice((*IOEvent)(unsafe.Add(unsafe.Pointer(r), unsafe.Sizeof(aioRing{}))), r.nr)
}

// UserRing reports whether completions are reaped from the mapped ring in
// user space (true) or with io_getevents (false).
func (c *Context) UserRing() bool { return c.ring != nil }

// Reap takes up to len(events) completions that are already available,
// without waiting, and returns how many it took. With the user-space ring it
// makes no system call; otherwise it calls io_getevents with a zero timeout.
func (c *Context) Reap(events []IOEvent) (int, error) {
	if c.ring == nil {
		return c.GetEvents(0, events, 0)
	}
	return c.reapRing(events), nil
}

// Wait returns at least minNr completions (up to len(events)), waiting up to
// timeout for them, like GetEvents; but it first takes what is already in
// the ring from user space and enters the kernel only if that is not enough.
// A negative timeout waits without limit.
func (c *Context) Wait(minNr int, events []IOEvent, timeout time.Duration) (int, error) {
	n := 0
	if c.ring != nil {
		n = c.reapRing(events)
		if n >= minNr || n == len(events) {
			return n, nil
		}
	}
	m, err := c.GetEvents(minNr-n, events[n:], timeout)
	return n + m, err
}

// reapRing consumes events from the ring in user space.
//
// The kernel writes an io_event into slot tail, then (after a write barrier)
// publishes the new tail; it reuses a slot only after the consumer has moved
// head past it, which it learns by reading head. So: load tail with acquire
// semantics before reading the slots, and store head with release semantics
// after copying them. sync/atomic's operations are sequentially consistent,
// which is at least that.
func (c *Context) reapRing(events []IOEvent) int {
	r := c.ring
	nr := uint32(len(c.events))
	head := atomic.LoadUint32(&r.head)
	tail := atomic.LoadUint32(&r.tail)
	// The kernel keeps both below nr; a corrupted head (the page is
	// writable by the process) is reduced as the kernel itself does.
	if head >= nr || tail >= nr {
		head %= nr
		tail %= nr
	}
	n := 0
	for head != tail && n < len(events) {
		end := tail
		if tail < head {
			end = nr // copy to the end of the ring, then wrap
		}
		k := copy(events[n:], c.events[head:end])
		n += k
		head += uint32(k)
		if head == nr {
			head = 0
		}
	}
	if n > 0 {
		atomic.StoreUint32(&r.head, head)
	}
	return n
}
