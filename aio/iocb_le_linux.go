//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package aio

// IOCB is struct iocb, one request, for little-endian architectures. The
// kernel declares aio_key and aio_rw_flags in byte-order dependent order so
// that the pair reads as one 64-bit word either way; on little-endian
// machines aio_key comes first.
//
// Fill it with one of the Prep methods, then set Data and, if wanted,
// RWFlags and SetResfd.
type IOCB struct {
	Data      uint64 // aio_data: returned unchanged in IOEvent.Data
	Key       uint32 // aio_key: written by the kernel during io_submit, read by io_cancel
	RWFlags   int32  // aio_rw_flags: RWF_* flags, reads and writes only
	Opcode    uint16 // aio_lio_opcode: IOCB_CMD_*
	Reqprio   int16  // aio_reqprio: I/O priority, used with IOCB_FLAG_IOPRIO
	Fildes    uint32 // aio_fildes
	Buf       uint64 // aio_buf: buffer address, iovec array address, or poll events
	Nbytes    uint64 // aio_nbytes: buffer length or iovec count
	Offset    int64  // aio_offset: file offset
	Reserved2 uint64 // aio_reserved2: must be zero
	Flags     uint32 // aio_flags: IOCB_FLAG_*
	Resfd     uint32 // aio_resfd: eventfd signalled when IOCB_FLAG_RESFD is set
}
