//go:build linux

package diskio

import "unsafe"

// Alignment and aligned bounce buffers for O_DIRECT.

const maxBounce = 1 << 20

func (f *File) aligned(b []byte, off int64) bool {
	return off%f.block == 0 && int64(len(b))%f.block == 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(b)))%f.mem == 0
}

func (f *File) alignDown(off int64) int64 { return off - off%f.block }
func (f *File) alignUp(off int64) int64   { return f.alignDown(off + f.block - 1) }

// Bounce buffers come from the scheduler's buffer cache (registered
// memory where io_uring allows) and go back to it: the scheduler owns
// them, and a closed scheduler refuses them (sched.ErrClosed, which the
// File reports as os.ErrClosed).

func (f *File) getBounce(n int) ([]byte, error) { return f.sched().GetBuffer(n) }

func (f *File) putBounce(b []byte) { f.sched().PutBuffer(b) }
