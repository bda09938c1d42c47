package seccomp

// ABIBit and AuditArch lend the tests the architecture's constants.
const (
	ABIBit    = abiBit
	AuditArch = auditArch
)

// Syscalls lends the tests the numbers a Set refuses.
func (s Set) Syscalls() []uint32 { return s.syscalls() }
