package seccomp

import "golang.org/x/sys/unix"

// __X32_SYSCALL_BIT marks a call made through the x32 ABI, which shares
// AUDIT_ARCH_X86_64 with the native one (arch/x86/include/uapi/asm/unistd.h).
const __X32_SYSCALL_BIT = 0x40000000

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	abiBit    = __X32_SYSCALL_BIT // a number with it set is not native
)
