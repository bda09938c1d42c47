package seccomp

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	abiBit    = 0 // AArch32 calls carry AUDIT_ARCH_ARM
)
