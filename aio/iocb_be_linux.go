//go:build linux && (mips || mips64 || ppc64 || s390x)

package aio

// IOCB is struct iocb, one request, for big-endian architectures, where
// aio_rw_flags precedes aio_key. See the little-endian declaration for the
// field documentation.
type IOCB struct {
	Data      uint64 // aio_data
	RWFlags   int32  // aio_rw_flags
	Key       uint32 // aio_key
	Opcode    uint16 // aio_lio_opcode
	Reqprio   int16  // aio_reqprio
	Fildes    uint32 // aio_fildes
	Buf       uint64 // aio_buf
	Nbytes    uint64 // aio_nbytes
	Offset    int64  // aio_offset
	Reserved2 uint64 // aio_reserved2
	Flags     uint32 // aio_flags
	Resfd     uint32 // aio_resfd
}
