//go:build linux

package seccomp

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The offsets of struct seccomp_data's fields the filter reads
// (include/uapi/linux/seccomp.h: int nr; __u32 arch; ...).
const (
	seccompDataNr   = 0
	seccompDataArch = 4
)

// refuse is the filter's answer to a refused call: fail with EPERM, as
// Docker's default profile does (SCMP_ACT_ERRNO, defaultErrnoRet 1).
const refuse = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)

// syscalls returns the native numbers of the calls in s.
func (s Set) syscalls() []uint32 {
	var nrs []uint32
	if s&URing != 0 {
		nrs = append(nrs, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER)
	}
	if s&AIO != 0 {
		nrs = append(nrs, unix.SYS_IO_SETUP, unix.SYS_IO_DESTROY, unix.SYS_IO_SUBMIT,
			unix.SYS_IO_CANCEL, unix.SYS_IO_GETEVENTS, unix.SYS_IO_PGETEVENTS)
	}
	return nrs
}

// Program returns the classic BPF program Install installs for s on
// this architecture (AUDIT_ARCH_X86_64 or AUDIT_ARCH_AARCH64). It
// answers EPERM to the calls in s, and to every call made through an
// ABI other than the native one (i386's int 0x80 or x32 on x86-64),
// whose numbers it does not know, and lets every other call through.
func Program(s Set) ([]unix.SockFilter, error) {
	if auditArch == 0 {
		return nil, fmt.Errorf("seccomp: no filter for GOARCH=%s (amd64 and arm64 only)", runtime.GOARCH)
	}
	nrs := s.syscalls()
	if len(nrs) == 0 {
		return nil, errors.New("seccomp: no system call to refuse")
	}
	var prog []unix.SockFilter
	// jumps are the indexes of the instructions whose true branch goes
	// to the refusal at the end, patched once its index is known.
	var jumps []int
	toRefusal := func(code uint16, k uint32) {
		jumps = append(jumps, len(prog))
		prog = append(prog, unix.SockFilter{Code: code, K: k})
	}
	prog = append(prog, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: seccompDataArch})
	// Not the native ABI: jump over the next instruction, the one that
	// lets a native call be judged by its number, to the refusal.
	prog = append(prog,
		unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, K: auditArch},
		unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: refuse},
		unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: seccompDataNr})
	if abiBit != 0 {
		toRefusal(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, abiBit)
	}
	for _, nr := range nrs {
		toRefusal(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, nr)
	}
	prog = append(prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW})
	end := len(prog)
	prog = append(prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: refuse})
	for _, i := range jumps {
		prog[i].Jt = uint8(end - i - 1)
	}
	return prog, nil
}

// Install refuses the calls in s with EPERM in every thread of this
// process, those it starts later and its child processes, for good:
// prctl(PR_SET_NO_NEW_PRIVS), then seccomp(SECCOMP_SET_MODE_FILTER,
// SECCOMP_FILTER_FLAG_TSYNC) with Program(s). No new privileges is what
// lets a process without CAP_SYS_ADMIN install a filter; it also means
// that a set-user-ID program it executes runs without its privileges.
// Filters stack: after two Installs the union is refused.
func Install(s Set) error {
	prog, err := Program(s)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// No new privileges is a thread's attribute: set it on the thread
	// that installs the filter, and TSYNC gives both to every other
	// thread of the process.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_NO_NEW_PRIVS)", err)
	}
	tid, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return os.NewSyscallError("seccomp(SECCOMP_SET_MODE_FILTER)", errno)
	}
	if tid != 0 {
		// TSYNC's failure: a thread whose filters are not an ancestor
		// of this one's; nothing was installed.
		return fmt.Errorf("seccomp: thread %d cannot take the filter (SECCOMP_FILTER_FLAG_TSYNC)", tid)
	}
	return nil
}
