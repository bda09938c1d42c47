//go:build linux

package diskio

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/diskio-go/diskio/sched"
)

// directIO is what only a direct File has beside its O_DIRECT descriptor
// (File.dataFd, whose scheduler handle is File.handle): the descriptor's
// alignment, its registration in the ring's file table, and the state of
// its mixed writes, whose whole pages go direct and whose partial edge
// pages go through the buffered descriptor (write_linux.go). A page-cache
// File has none (File.direct is nil).
type directIO struct {
	block int64   // offset and length alignment
	mem   uintptr // memory alignment

	uses atomic.Int32 // requests sent to the scheduler, up to registerAfter (registerSoon)

	writeMix    sync.RWMutex // direct writes (read-locked) never overlap a buffered one (directWrite)
	readAheadAt int64        // start of the window readAheadEdge last asked for (writeMix)
	partialEnd  int64        // where the last write without a whole page ended (writeMix)
}

// newDirectIO is the state of a direct File whose descriptor takes
// offsets and lengths in multiples of block, memory in multiples of mem.
func newDirectIO(block int64, mem uintptr) *directIO {
	return &directIO{
		block:       block,
		mem:         mem,
		readAheadAt: -edgeWindow, // nothing asked yet
		partialEnd:  -1,
	}
}

// registerAfter is how many requests a direct File sends to the scheduler
// before it registers its descriptor in the ring's file table: enough that
// a file read or written a few times never waits for the round trip (nor
// its Close for the one that unregisters), few enough that a busy file
// saves the kernel's per-request file lookup almost at once.
const registerAfter = 64

// registerSoon counts a request on its way to the scheduler through h,
// the File's direct handle; the registerAfter-th registers it. The caller
// holds a reference, so Close, which ends the handle (and so unregisters
// it), comes after.
func (d *directIO) registerSoon(h *sched.File) {
	if d.uses.Load() >= registerAfter || d.uses.Add(1) != registerAfter {
		return
	}
	h.Register() // a File works unregistered
}

// beginBuffered marks a buffered write of the File's in flight until
// endBuffered: no direct write runs beside it (directWrite). A page-cache
// File (nil d) makes no direct writes: there is nothing to exclude.
func (d *directIO) beginBuffered() {
	if d != nil {
		d.writeMix.Lock()
	}
}

// endBuffered ends what beginBuffered began.
func (d *directIO) endBuffered() {
	if d != nil {
		d.writeMix.Unlock()
	}
}

// Alignment and aligned bounce buffers for O_DIRECT.

const maxBounce = 1 << 20

func (d *directIO) aligned(b []byte, off int64) bool {
	return off%d.block == 0 && int64(len(b))%d.block == 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(b)))%d.mem == 0
}

func (d *directIO) alignDown(off int64) int64 { return off - off%d.block }
func (d *directIO) alignUp(off int64) int64   { return d.alignDown(off + d.block - 1) }

// Bounce buffers come from the scheduler's buffer cache (registered
// memory where io_uring allows) and go back to it: the scheduler owns
// them, and a closed scheduler refuses them (sched.ErrClosed, which the
// File reports as os.ErrClosed).

func (f *File) getBounce(n int) ([]byte, error) { return f.sched().GetBuffer(n) }

func (f *File) putBounce(b []byte) { f.sched().PutBuffer(b) }
