//go:build linux

package uring

import (
	"strconv"
	"unsafe"
)

// The kernel ABI of io_uring (include/uapi/linux/io_uring.h), named as the
// kernel names it.

// Setup flags (io_uring_params.flags).
const (
	IORING_SETUP_IOPOLL             = 1 << 0
	IORING_SETUP_SQPOLL             = 1 << 1
	IORING_SETUP_SQ_AFF             = 1 << 2
	IORING_SETUP_CQSIZE             = 1 << 3
	IORING_SETUP_CLAMP              = 1 << 4
	IORING_SETUP_ATTACH_WQ          = 1 << 5
	IORING_SETUP_R_DISABLED         = 1 << 6
	IORING_SETUP_SUBMIT_ALL         = 1 << 7
	IORING_SETUP_COOP_TASKRUN       = 1 << 8
	IORING_SETUP_TASKRUN_FLAG       = 1 << 9
	IORING_SETUP_SQE128             = 1 << 10
	IORING_SETUP_CQE32              = 1 << 11
	IORING_SETUP_SINGLE_ISSUER      = 1 << 12
	IORING_SETUP_DEFER_TASKRUN      = 1 << 13
	IORING_SETUP_NO_MMAP            = 1 << 14
	IORING_SETUP_REGISTERED_FD_ONLY = 1 << 15
	IORING_SETUP_NO_SQARRAY         = 1 << 16
)

// Feature flags (io_uring_params.features), filled in by the kernel.
const (
	IORING_FEAT_SINGLE_MMAP     = 1 << 0
	IORING_FEAT_NODROP          = 1 << 1
	IORING_FEAT_SUBMIT_STABLE   = 1 << 2
	IORING_FEAT_RW_CUR_POS      = 1 << 3
	IORING_FEAT_CUR_PERSONALITY = 1 << 4
	IORING_FEAT_FAST_POLL       = 1 << 5
	IORING_FEAT_POLL_32BITS     = 1 << 6
	IORING_FEAT_SQPOLL_NONFIXED = 1 << 7
	IORING_FEAT_EXT_ARG         = 1 << 8
	IORING_FEAT_NATIVE_WORKERS  = 1 << 9
	IORING_FEAT_RSRC_TAGS       = 1 << 10
	IORING_FEAT_CQE_SKIP        = 1 << 11
	IORING_FEAT_LINKED_FILE     = 1 << 12
	IORING_FEAT_REG_REG_RING    = 1 << 13
	IORING_FEAT_RECVSEND_BUNDLE = 1 << 14
	IORING_FEAT_MIN_TIMEOUT     = 1 << 15
	IORING_FEAT_RW_ATTR         = 1 << 16
	IORING_FEAT_NO_IOWAIT       = 1 << 17
)

// io_uring_enter flags.
const (
	IORING_ENTER_GETEVENTS       = 1 << 0
	IORING_ENTER_SQ_WAKEUP       = 1 << 1
	IORING_ENTER_SQ_WAIT         = 1 << 2
	IORING_ENTER_EXT_ARG         = 1 << 3
	IORING_ENTER_REGISTERED_RING = 1 << 4
)

// SQ ring flags (sq_off.flags), written by the kernel.
const (
	IORING_SQ_NEED_WAKEUP = 1 << 0
	IORING_SQ_CQ_OVERFLOW = 1 << 1
	IORING_SQ_TASKRUN     = 1 << 2
)

// CQ ring flags (cq_off.flags).
const IORING_CQ_EVENTFD_DISABLED = 1 << 0

// SQE flags (io_uring_sqe.flags).
const (
	IOSQE_FIXED_FILE       = 1 << 0
	IOSQE_IO_DRAIN         = 1 << 1
	IOSQE_IO_LINK          = 1 << 2
	IOSQE_IO_HARDLINK      = 1 << 3
	IOSQE_ASYNC            = 1 << 4
	IOSQE_BUFFER_SELECT    = 1 << 5
	IOSQE_CQE_SKIP_SUCCESS = 1 << 6
)

// Per-opcode flags.
const (
	IORING_FSYNC_DATASYNC        = 1 << 0 // fsync_flags
	IORING_TIMEOUT_ABS           = 1 << 0 // timeout_flags
	IORING_TIMEOUT_UPDATE        = 1 << 1
	IORING_TIMEOUT_BOOTTIME      = 1 << 2
	IORING_TIMEOUT_REALTIME      = 1 << 3
	IORING_LINK_TIMEOUT_UPDATE   = 1 << 4
	IORING_TIMEOUT_ETIME_SUCCESS = 1 << 5
	IORING_ASYNC_CANCEL_ALL      = 1 << 0 // cancel_flags
	IORING_ASYNC_CANCEL_FD       = 1 << 1
	IORING_ASYNC_CANCEL_ANY      = 1 << 2
	IORING_ASYNC_CANCEL_FD_FIXED = 1 << 3
	IORING_POLL_ADD_MULTI        = 1 << 0 // POLL_ADD len
)

// CQE flags (io_uring_cqe.flags).
const (
	IORING_CQE_F_BUFFER = 1 << 0
	IORING_CQE_F_MORE   = 1 << 1
)

// mmap offsets of the rings and the SQE array.
const (
	IORING_OFF_SQ_RING = 0
	IORING_OFF_CQ_RING = 0x8000000
	IORING_OFF_SQES    = 0x10000000
)

// io_uring_register opcodes.
const (
	IORING_REGISTER_BUFFERS          = 0
	IORING_UNREGISTER_BUFFERS        = 1
	IORING_REGISTER_FILES            = 2
	IORING_UNREGISTER_FILES          = 3
	IORING_REGISTER_EVENTFD          = 4
	IORING_UNREGISTER_EVENTFD        = 5
	IORING_REGISTER_FILES_UPDATE     = 6
	IORING_REGISTER_EVENTFD_ASYNC    = 7
	IORING_REGISTER_PROBE            = 8
	IORING_REGISTER_IOWQ_MAX_WORKERS = 19
	IORING_REGISTER_RING_FDS         = 20
	IORING_UNREGISTER_RING_FDS       = 21
)

// IO_URING_OP_SUPPORTED is set in io_uring_probe_op.flags for supported ops.
const IO_URING_OP_SUPPORTED = 1 << 0

// Op is an io_uring opcode (enum io_uring_op).
type Op uint8

const (
	IORING_OP_NOP Op = iota
	IORING_OP_READV
	IORING_OP_WRITEV
	IORING_OP_FSYNC
	IORING_OP_READ_FIXED
	IORING_OP_WRITE_FIXED
	IORING_OP_POLL_ADD
	IORING_OP_POLL_REMOVE
	IORING_OP_SYNC_FILE_RANGE
	IORING_OP_SENDMSG
	IORING_OP_RECVMSG
	IORING_OP_TIMEOUT
	IORING_OP_TIMEOUT_REMOVE
	IORING_OP_ACCEPT
	IORING_OP_ASYNC_CANCEL
	IORING_OP_LINK_TIMEOUT
	IORING_OP_CONNECT
	IORING_OP_FALLOCATE
	IORING_OP_OPENAT
	IORING_OP_CLOSE
	IORING_OP_FILES_UPDATE
	IORING_OP_STATX
	IORING_OP_READ
	IORING_OP_WRITE
	IORING_OP_FADVISE
	IORING_OP_MADVISE
	IORING_OP_SEND
	IORING_OP_RECV
	IORING_OP_OPENAT2
	IORING_OP_EPOLL_CTL
	IORING_OP_SPLICE
	IORING_OP_PROVIDE_BUFFERS
	IORING_OP_REMOVE_BUFFERS
	IORING_OP_TEE
	IORING_OP_SHUTDOWN
	IORING_OP_RENAMEAT
	IORING_OP_UNLINKAT
	IORING_OP_MKDIRAT
	IORING_OP_SYMLINKAT
	IORING_OP_LINKAT
	IORING_OP_MSG_RING
	IORING_OP_FSETXATTR
	IORING_OP_SETXATTR
	IORING_OP_FGETXATTR
	IORING_OP_GETXATTR
	IORING_OP_SOCKET
	IORING_OP_URING_CMD
	IORING_OP_SEND_ZC
	IORING_OP_SENDMSG_ZC
	IORING_OP_READ_MULTISHOT
	IORING_OP_WAITID
	IORING_OP_FUTEX_WAIT
	IORING_OP_FUTEX_WAKE
	IORING_OP_FUTEX_WAITV
	IORING_OP_FIXED_FD_INSTALL
	IORING_OP_FTRUNCATE
	IORING_OP_BIND
	IORING_OP_LISTEN
	IORING_OP_RECV_ZC
	IORING_OP_EPOLL_WAIT
	IORING_OP_READV_FIXED
	IORING_OP_WRITEV_FIXED
	IORING_OP_PIPE
)

var opNames = [...]string{
	"NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED", "POLL_ADD", "POLL_REMOVE",
	"SYNC_FILE_RANGE", "SENDMSG", "RECVMSG", "TIMEOUT", "TIMEOUT_REMOVE", "ACCEPT", "ASYNC_CANCEL",
	"LINK_TIMEOUT", "CONNECT", "FALLOCATE", "OPENAT", "CLOSE", "FILES_UPDATE", "STATX", "READ",
	"WRITE", "FADVISE", "MADVISE", "SEND", "RECV", "OPENAT2", "EPOLL_CTL", "SPLICE",
	"PROVIDE_BUFFERS", "REMOVE_BUFFERS", "TEE", "SHUTDOWN", "RENAMEAT", "UNLINKAT", "MKDIRAT",
	"SYMLINKAT", "LINKAT", "MSG_RING", "FSETXATTR", "SETXATTR", "FGETXATTR", "GETXATTR", "SOCKET",
	"URING_CMD", "SEND_ZC", "SENDMSG_ZC", "READ_MULTISHOT", "WAITID", "FUTEX_WAIT", "FUTEX_WAKE",
	"FUTEX_WAITV", "FIXED_FD_INSTALL", "FTRUNCATE", "BIND", "LISTEN", "RECV_ZC", "EPOLL_WAIT",
	"READV_FIXED", "WRITEV_FIXED", "PIPE",
}

func (op Op) String() string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return "OP_" + strconv.Itoa(int(op))
}

// SQE is struct io_uring_sqe (64 bytes). Unions are given the name of their
// most common member; OpFlags is rw_flags, fsync_flags, poll32_events,
// timeout_flags or cancel_flags, depending on Opcode.
type SQE struct {
	Opcode      Op
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64 // off / addr2
	Addr        uint64 // addr / splice_off_in
	Len         uint32
	OpFlags     uint32
	UserData    uint64
	BufIndex    uint16 // buf_index / buf_group
	Personality uint16
	FileIndex   uint32 // splice_fd_in / file_index
	Addr3       uint64
	_           uint64
}

// CQE is struct io_uring_cqe (16 bytes, without IORING_SETUP_CQE32).
type CQE struct {
	UserData uint64
	Res      int32 // bytes transferred, or -errno
	Flags    uint32
}

type sqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, resv1 uint32
	UserAddr                                                        uint64
}

type cqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, Cqes, Flags, resv1 uint32
	UserAddr                                                        uint64
}

// params is struct io_uring_params.
type params struct {
	SQEntries    uint32
	CQEntries    uint32
	Flags        uint32
	SQThreadCPU  uint32
	SQThreadIdle uint32
	Features     uint32
	WQFd         uint32
	resv         [3]uint32
	SQOff        sqringOffsets
	CQOff        cqringOffsets
}

// getEventsArg is struct io_uring_getevents_arg, passed with
// IORING_ENTER_EXT_ARG.
type getEventsArg struct {
	Sigmask   uint64
	SigmaskSz uint32
	MinWait   uint32 // min_wait_usec, with IORING_FEAT_MIN_TIMEOUT
	Ts        uint64
}

// Timespec is struct __kernel_timespec.
type Timespec struct {
	Sec  int64
	Nsec int64
}

// filesUpdate is struct io_uring_files_update.
type filesUpdate struct {
	Offset uint32
	resv   uint32
	Fds    uint64
}

type probeHeader struct {
	LastOp uint8
	OpsLen uint8
	resv   uint16
	resv2  [3]uint32
}

type probeOp struct {
	Op    uint8
	resv  uint8
	Flags uint16
	resv2 uint32
}

// Layout checks: a wrong size fails to compile.
var (
	_ [64 - unsafe.Sizeof(SQE{})]byte
	_ [unsafe.Sizeof(SQE{}) - 64]byte
	_ [16 - unsafe.Sizeof(CQE{})]byte
	_ [unsafe.Sizeof(CQE{}) - 16]byte
	_ [120 - unsafe.Sizeof(params{})]byte
	_ [unsafe.Sizeof(params{}) - 120]byte
	_ [24 - unsafe.Sizeof(getEventsArg{})]byte
	_ [unsafe.Sizeof(getEventsArg{}) - 24]byte
	_ [16 - unsafe.Sizeof(probeHeader{})]byte
	_ [8 - unsafe.Sizeof(probeOp{})]byte
	_ [16 - unsafe.Sizeof(filesUpdate{})]byte
)
