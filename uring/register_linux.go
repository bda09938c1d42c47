//go:build linux

package uring

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

func (r *Ring) register(op uintptr, arg unsafe.Pointer, nr uint32) (int, error) {
	for {
		n, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), op, uintptr(arg), uintptr(nr), 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return int(n), nil
	}
}

// RegisterBuffers registers bufs as fixed buffers 0..len(bufs)-1 for
// READ_FIXED and WRITE_FIXED: the kernel pins their pages once, instead of
// once per request. They must be anonymous memory (mem.Map or the Go heap)
// that stays mapped until UnregisterBuffers or Close. Their size counts
// against RLIMIT_MEMLOCK on kernels that charge it.
func (r *Ring) RegisterBuffers(bufs [][]byte) error {
	iovs := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		iovs[i].Base = unsafe.SliceData(b)
		iovs[i].SetLen(len(b))
	}
	_, err := r.register(IORING_REGISTER_BUFFERS, iovAddr(iovs), uint32(len(iovs)))
	switch err {
	case nil:
		return nil
	case unix.ENOMEM:
		var lim unix.Rlimit
		unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim)
		return fmt.Errorf("%w (RLIMIT_MEMLOCK is %d bytes)", os.NewSyscallError("io_uring_register buffers", err), lim.Cur)
	case unix.EOPNOTSUPP, unix.EFAULT:
		return fmt.Errorf("%w (fixed buffers must be anonymous memory)", os.NewSyscallError("io_uring_register buffers", err))
	}
	return os.NewSyscallError("io_uring_register buffers", err)
}

// UnregisterBuffers drops every registered buffer.
func (r *Ring) UnregisterBuffers() error {
	_, err := r.register(IORING_UNREGISTER_BUFFERS, nil, 0)
	return wrapRegister("unregister buffers", err)
}

// RegisterFiles registers fds as fixed files 0..len(fds)-1, used with
// IOSQE_FIXED_FILE to skip the per-request file lookup and reference
// count. An fd of -1 leaves a slot empty for UpdateFiles.
func (r *Ring) RegisterFiles(fds []int32) error {
	_, err := r.register(IORING_REGISTER_FILES, unsafe.Pointer(unsafe.SliceData(fds)), uint32(len(fds)))
	return wrapRegister("register files", err)
}

// UpdateFiles replaces registered files off..off+len(fds)-1 (-1 empties a
// slot) and returns how many were updated.
func (r *Ring) UpdateFiles(off uint32, fds []int32) (int, error) {
	up := filesUpdate{Offset: off, Fds: uint64(uintptr(unsafe.Pointer(unsafe.SliceData(fds))))}
	n, err := r.register(IORING_REGISTER_FILES_UPDATE, unsafe.Pointer(&up), uint32(len(fds)))
	return n, wrapRegister("update files", err)
}

// UnregisterFiles drops every registered file.
func (r *Ring) UnregisterFiles() error {
	_, err := r.register(IORING_UNREGISTER_FILES, nil, 0)
	return wrapRegister("unregister files", err)
}

// RegisterEventfd makes the kernel signal fd (an eventfd) whenever it posts
// a completion, so that a thread blocked elsewhere (epoll, read) learns of
// completions.
func (r *Ring) RegisterEventfd(fd int) error {
	efd := int32(fd)
	_, err := r.register(IORING_REGISTER_EVENTFD, unsafe.Pointer(&efd), 1)
	return wrapRegister("register eventfd", err)
}

// RegisterEventfdAsync is RegisterEventfd for completions that were not
// posted inline by the submitting io_uring_enter only.
func (r *Ring) RegisterEventfdAsync(fd int) error {
	efd := int32(fd)
	_, err := r.register(IORING_REGISTER_EVENTFD_ASYNC, unsafe.Pointer(&efd), 1)
	return wrapRegister("register eventfd async", err)
}

// UnregisterEventfd removes the registered eventfd.
func (r *Ring) UnregisterEventfd() error {
	_, err := r.register(IORING_UNREGISTER_EVENTFD, nil, 0)
	return wrapRegister("unregister eventfd", err)
}

// MaxWorkers bounds the io-wq worker threads of one submitting thread:
// Bounded for work that completes in bounded time (reads, writes, fsync,
// fallocate on regular files and block devices), Unbounded for work that
// may wait forever (pipes, sockets). Zero means "leave as it is".
type MaxWorkers struct {
	Bounded   uint32
	Unbounded uint32
}

// RegisterIOWQMaxWorkers is IORING_REGISTER_IOWQ_MAX_WORKERS (Linux 5.15):
// it caps the io-wq workers that run what cannot complete without
// blocking (fsync, fallocate, O_DIRECT writes that extend a file,
// buffered writes). Workers belong to the submitting thread, not to the
// ring: the limit is applied to the calling thread's pool and to the pool
// of every thread that has submitted to this ring so far, and is kept
// for threads whose first ring this is when they first submit (a thread
// that already had a pool from another ring keeps that pool's limit). The
// kernel lowers each count to RLIMIT_NPROC. It returns the calling
// thread's previous limits, or zeros when that thread has submitted to no
// ring yet; with m zero it changes nothing and reads them.
func (r *Ring) RegisterIOWQMaxWorkers(m MaxWorkers) (prev MaxWorkers, err error) {
	counts := [2]uint32{m.Bounded, m.Unbounded}
	if _, err := r.register(IORING_REGISTER_IOWQ_MAX_WORKERS, unsafe.Pointer(&counts), 2); err != nil {
		return MaxWorkers{}, wrapRegister("iowq max workers", err)
	}
	return MaxWorkers{Bounded: counts[0], Unbounded: counts[1]}, nil
}

func wrapRegister(what string, err error) error {
	if err == nil {
		return nil
	}
	return os.NewSyscallError("io_uring_register "+what, err)
}

// Probe is the kernel's answer to IORING_REGISTER_PROBE: which opcodes this
// kernel implements.
type Probe struct {
	LastOp    Op // highest opcode the kernel knows
	supported [256]bool
}

// Supported reports whether the kernel implements op.
func (p *Probe) Supported(op Op) bool { return p.supported[op] }

// Ops lists the supported opcodes.
func (p *Probe) Ops() []Op {
	var ops []Op
	for i, ok := range p.supported {
		if ok {
			ops = append(ops, Op(i))
		}
	}
	return ops
}

// Probe asks the kernel which opcodes it supports (Linux 5.6).
func (r *Ring) Probe() (*Probe, error) {
	const nops = 256
	buf := make([]byte, unsafe.Sizeof(probeHeader{})+nops*unsafe.Sizeof(probeOp{}))
	if _, err := r.register(IORING_REGISTER_PROBE, unsafe.Pointer(&buf[0]), nops); err != nil {
		return nil, wrapRegister("probe", err)
	}
	h := (*probeHeader)(unsafe.Pointer(&buf[0]))
	ops := unsafe.Slice((*probeOp)(unsafe.Pointer(&buf[unsafe.Sizeof(probeHeader{})])), h.OpsLen)
	p := &Probe{LastOp: Op(h.LastOp)}
	for _, o := range ops {
		if o.Flags&IO_URING_OP_SUPPORTED != 0 {
			p.supported[o.Op] = true
		}
	}
	return p, nil
}
