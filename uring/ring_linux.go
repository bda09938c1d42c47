//go:build linux

package uring

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Params configures a ring. The zero value asks for a plain interrupt-driven
// ring whose CQ is twice the SQ, the kernel's default.
type Params struct {
	// Flags are IORING_SETUP_* flags. Each one is required: a kernel that
	// rejects one fails Setup with EINVAL (Detect says which it accepts).
	Flags uint32
	// CQEntries, if non-zero, sizes the CQ (IORING_SETUP_CQSIZE is implied).
	CQEntries uint32
	// SQThreadIdle is how long the SQPOLL kernel thread spins before it
	// sleeps and needs a wake-up (IORING_SETUP_SQPOLL only).
	SQThreadIdle time.Duration
	// SQThreadCPU pins the SQPOLL thread (IORING_SETUP_SQ_AFF is implied
	// when SQThreadCPU >= 0 and SQPOLL is set; use -1 for no pinning).
	SQThreadCPU int
}

// Ring is one io_uring instance: its fd, its mapped SQ, CQ and SQE array, and
// the owner's private view of them. A Ring is owned by one goroutine.
type Ring struct {
	fd       int
	flags    uint32 // setup flags in effect
	features uint32

	// Submission queue. sqeHead..sqeTail are SQEs handed out by GetSQE and
	// not yet published to the kernel; the kernel consumes up to *sqTail.
	sqHead    *uint32 // written by the kernel
	sqTail    *uint32 // written by us
	sqFlags   *uint32 // written by the kernel
	sqDropped *uint32
	sqMask    uint32
	sqEntries uint32
	sqArray   []uint32
	sqes      []SQE
	sqeHead   uint32
	sqeTail   uint32

	// Completion queue.
	cqHead     *uint32 // written by us
	cqTail     *uint32 // written by the kernel
	cqFlags    *uint32
	cqOverflow *uint32
	cqMask     uint32
	cqEntries  uint32
	cqes       []CQE

	ringMem []byte // SQ ring (and CQ ring with IORING_FEAT_SINGLE_MMAP)
	cqMem   []byte // CQ ring when mapped separately
	sqeMem  []byte

	// Kept here, not on the stack, so that io_uring_enter's argument has a
	// stable heap address and costs no allocation per call.
	arg getEventsArg
	ts  Timespec
}

// Setup creates a ring with room for entries SQEs (rounded up to a power of
// two by the kernel; at most 32768).
func Setup(entries uint32, p *Params) (*Ring, error) {
	var kp params
	if p != nil {
		kp.Flags = p.Flags
		if p.CQEntries != 0 {
			kp.Flags |= IORING_SETUP_CQSIZE
			kp.CQEntries = p.CQEntries
		}
		if p.Flags&IORING_SETUP_SQPOLL != 0 {
			kp.SQThreadIdle = uint32(p.SQThreadIdle / time.Millisecond)
			if p.SQThreadCPU >= 0 {
				kp.Flags |= IORING_SETUP_SQ_AFF
				kp.SQThreadCPU = uint32(p.SQThreadCPU)
			}
		}
	}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&kp)), 0)
	if errno != 0 {
		return nil, setupError(errno, kp.Flags)
	}
	r := &Ring{fd: int(fd), flags: kp.Flags, features: kp.Features}
	if err := r.mmap(&kp); err != nil {
		unix.Close(r.fd)
		return nil, err
	}
	return r, nil
}

// setupError says why io_uring_setup failed in the words a user needs.
func setupError(errno syscall.Errno, flags uint32) error {
	err := os.NewSyscallError("io_uring_setup", errno)
	switch errno {
	case unix.ENOSYS:
		return fmt.Errorf("%w (kernel without io_uring)", err)
	case unix.EPERM:
		return fmt.Errorf("%w (io_uring disabled by sysctl kernel.io_uring_disabled or blocked by seccomp, e.g. Docker's default profile)", err)
	case unix.EINVAL:
		return fmt.Errorf("%w (setup flags %s not supported by this kernel?)", err, SetupFlags(flags))
	case unix.ENOMEM:
		return fmt.Errorf("%w (RLIMIT_MEMLOCK too low for the rings?)", err)
	}
	return err
}

func (r *Ring) mmap(p *params) error {
	sqSize := uintptr(p.SQOff.Array) + uintptr(p.SQEntries)*4
	cqSize := uintptr(p.CQOff.Cqes) + uintptr(p.CQEntries)*unsafe.Sizeof(CQE{})
	single := p.Features&IORING_FEAT_SINGLE_MMAP != 0
	if single && cqSize > sqSize {
		sqSize = cqSize
	}
	var err error
	r.ringMem, err = mapRing(r.fd, sqSize, IORING_OFF_SQ_RING)
	if err != nil {
		return err
	}
	cqMem := r.ringMem
	if !single {
		if r.cqMem, err = mapRing(r.fd, cqSize, IORING_OFF_CQ_RING); err != nil {
			r.unmap()
			return err
		}
		cqMem = r.cqMem
	}
	if r.sqeMem, err = mapRing(r.fd, uintptr(p.SQEntries)*unsafe.Sizeof(SQE{}), IORING_OFF_SQES); err != nil {
		r.unmap()
		return err
	}

	sq := &p.SQOff
	r.sqHead = u32At(r.ringMem, sq.Head)
	r.sqTail = u32At(r.ringMem, sq.Tail)
	r.sqFlags = u32At(r.ringMem, sq.Flags)
	r.sqDropped = u32At(r.ringMem, sq.Dropped)
	r.sqMask = *u32At(r.ringMem, sq.RingMask)
	r.sqEntries = *u32At(r.ringMem, sq.RingEntries)
	r.sqArray = unsafe.Slice(u32At(r.ringMem, sq.Array), r.sqEntries)
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), r.sqEntries)
	// The indirection array is filled once with the identity: SQE i lives
	// in slot i, so submitting never has to write it again.
	for i := range r.sqArray {
		r.sqArray[i] = uint32(i)
	}

	cq := &p.CQOff
	r.cqHead = u32At(cqMem, cq.Head)
	r.cqTail = u32At(cqMem, cq.Tail)
	r.cqOverflow = u32At(cqMem, cq.Overflow)
	if cq.Flags != 0 {
		r.cqFlags = u32At(cqMem, cq.Flags)
	}
	r.cqMask = *u32At(cqMem, cq.RingMask)
	r.cqEntries = *u32At(cqMem, cq.RingEntries)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&cqMem[cq.Cqes])), r.cqEntries)
	return nil
}

func mapRing(fd int, size uintptr, off int64) ([]byte, error) {
	b, err := unix.Mmap(fd, off, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("io_uring mmap (offset %#x, %d bytes): %w", off, size, err)
	}
	return b, nil
}

func u32At(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }

func (r *Ring) unmap() {
	for _, m := range []*[]byte{&r.sqeMem, &r.cqMem, &r.ringMem} {
		if *m != nil {
			unix.Munmap(*m)
			*m = nil
		}
	}
}

// Close unmaps the rings and closes the ring's fd. The kernel cancels what
// is still in flight and finishes tearing the ring down asynchronously; the
// owner must not free buffers of requests whose completions it has not
// reaped until it has waited for them (Close does not wait).
func (r *Ring) Close() error {
	if r.fd < 0 {
		return errors.New("uring: ring already closed")
	}
	r.unmap()
	r.sqes, r.cqes, r.sqArray = nil, nil, nil
	err := unix.Close(r.fd)
	r.fd = -1
	if err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}

// Fd returns the ring's file descriptor.
func (r *Ring) Fd() int { return r.fd }

// Flags returns the setup flags in effect.
func (r *Ring) Flags() SetupFlags { return SetupFlags(r.flags) }

// Features returns the IORING_FEAT_* flags the kernel reported at setup.
func (r *Ring) Features() Features { return Features(r.features) }

// SQEntries and CQEntries are the sizes of the two queues.
func (r *Ring) SQEntries() uint32 { return r.sqEntries }
func (r *Ring) CQEntries() uint32 { return r.cqEntries }

// Overflow reports how many completions the kernel had to drop because the
// CQ was full. It stays 0 on kernels with IORING_FEAT_NODROP unless the
// kernel could not allocate memory to hold the overflow.
func (r *Ring) Overflow() uint32 { return atomic.LoadUint32(r.cqOverflow) }

// Dropped reports how many SQEs the kernel rejected as invalid (an SQ array
// index out of range); it is always 0 for this package's rings.
func (r *Ring) Dropped() uint32 { return atomic.LoadUint32(r.sqDropped) }
