//go:build linux

package diskio

import (
	"runtime"
	"sync/atomic"
)

// A Buffer's memory is off the Go heap (registered or mapped for
// O_DIRECT), so the garbage collector cannot see what a dropped Buffer
// holds: without a cleanup, every Buffer never released leaked its block
// for good.
// The cleanup gives the memory back when the Buffer becomes unreachable,
// and counts it, so that a leak is a number instead of a slow growth.

var droppedBuffers atomic.Int64

// DroppedBuffers returns how many Buffers the garbage collector found
// unreleased since the process started; their memory was returned then.
// A count that grows means a caller forgets Release: the memory comes back
// only after a collection, so until then it is held for nothing.
func DroppedBuffers() int64 { return droppedBuffers.Load() }

// newPooledBuffer makes a Buffer object for the pool, with the cleanup
// attached once for the object's life: it holds the Buffer's hold, never
// the Buffer (which would keep it alive), and finds the hold empty unless
// the Buffer was dropped holding memory. A Buffer the pool itself drops
// was released, so it counts nothing; the cost per ReadBuffer is none.
func newPooledBuffer() *Buffer {
	b := &Buffer{hold: new(bufferHold)}
	runtime.AddCleanup(b, func(h *bufferHold) {
		if m := h.mem.Swap(nil); m != nil {
			droppedBuffers.Add(1)
			m.release()
		}
	}, b.hold)
	return b
}
