//go:build linux && !amd64 && !arm64

package seccomp

// Program refuses to build a filter for an architecture whose system-call
// numbers it was not written for.
const (
	auditArch = 0
	abiBit    = 0
)
