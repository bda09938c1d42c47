//go:build linux

package aio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Request opcodes, the aio_lio_opcode values of include/uapi/linux/aio_abi.h.
const (
	IOCB_CMD_PREAD  = 0
	IOCB_CMD_PWRITE = 1
	IOCB_CMD_FSYNC  = 2
	IOCB_CMD_FDSYNC = 3
	// 4 was the experimental IOCB_CMD_PREADX, never merged.

	// IOCB_CMD_POLL (Linux 4.18) waits for poll events on any pollable
	// file; aio_buf holds the requested events, res the returned ones.
	// Unlike file I/O it can be cancelled with io_cancel.
	IOCB_CMD_POLL = 5
	// IOCB_CMD_NOOP is declared by the header but not implemented by the
	// kernel: io_submit rejects it with EINVAL. AIO has no no-op request.
	IOCB_CMD_NOOP    = 6
	IOCB_CMD_PREADV  = 7
	IOCB_CMD_PWRITEV = 8
)

// Values of aio_flags.
const (
	// IOCB_FLAG_RESFD asks the kernel to add 1 to the eventfd in aio_resfd
	// when the request completes, so that a poller (or an io_uring, or the
	// Go netpoller) can learn of completions without io_getevents.
	IOCB_FLAG_RESFD = 1 << 0
	// IOCB_FLAG_IOPRIO makes the kernel use aio_reqprio as the request's
	// I/O priority (Linux 4.18).
	IOCB_FLAG_IOPRIO = 1 << 1
)

// Per-request flags for aio_rw_flags (Linux 4.13), the same RWF_* flags as
// preadv2/pwritev2. They apply to reads and writes only; FSYNC, FDSYNC and
// POLL requests must leave aio_rw_flags zero.
const (
	RWF_HIPRI  = unix.RWF_HIPRI  // poll for completion (needs an IOPOLL-capable queue)
	RWF_DSYNC  = unix.RWF_DSYNC  // this write is O_DSYNC: data durable on completion
	RWF_SYNC   = unix.RWF_SYNC   // this write is O_SYNC: data and metadata durable
	RWF_NOWAIT = unix.RWF_NOWAIT // complete with -EAGAIN instead of blocking in io_submit
	RWF_APPEND = unix.RWF_APPEND // this write appends, ignoring aio_offset
)

// IOEvent is struct io_event, one completion. Its layout is the same on
// every architecture: four 64-bit words.
type IOEvent struct {
	Data uint64 // data: aio_data of the completed IOCB, unchanged
	Obj  uint64 // obj: address of the IOCB as it was passed to io_submit
	Res  int64  // res: bytes transferred, or -errno
	Res2 int64  // res2: secondary result, 0 for file I/O
}

// Kernel constants of the completion ring (fs/aio.c); they are not in the
// uapi headers but libaio and others rely on them.
const (
	AIO_RING_MAGIC             = 0xa10a10a1
	AIO_RING_COMPAT_FEATURES   = 1
	AIO_RING_INCOMPAT_FEATURES = 0
)

// aioRing is the header of struct aio_ring, the completion ring io_setup maps
// into the process at the address it returns as the context handle. The
// io_event array follows the 32-byte header. The kernel appends events at
// tail; whoever consumes them (io_getevents, or Context.Reap) advances head.
type aioRing struct {
	id               uint32 // kernel-internal index
	nr               uint32 // number of io_event slots
	head             uint32 // next event to consume; written by the consumer
	tail             uint32 // next slot the kernel fills; written by the kernel
	magic            uint32 // AIO_RING_MAGIC
	compatFeatures   uint32
	incompatFeatures uint32 // must be 0 for user space to read the ring
	headerLength     uint32 // size of this header
}

// Compile-time checks that the layouts have the kernel's sizes: each array
// length is negative, which does not compile, if the size is off either way.
var (
	_ [32 - unsafe.Sizeof(IOEvent{})]byte
	_ [unsafe.Sizeof(IOEvent{}) - 32]byte
	_ [32 - unsafe.Sizeof(aioRing{})]byte
	_ [unsafe.Sizeof(aioRing{}) - 32]byte
)
