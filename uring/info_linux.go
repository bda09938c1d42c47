//go:build linux

package uring

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// SetupFlags is a set of IORING_SETUP_* flags that prints by name.
type SetupFlags uint32

var setupNames = []string{
	"IOPOLL", "SQPOLL", "SQ_AFF", "CQSIZE", "CLAMP", "ATTACH_WQ", "R_DISABLED", "SUBMIT_ALL",
	"COOP_TASKRUN", "TASKRUN_FLAG", "SQE128", "CQE32", "SINGLE_ISSUER", "DEFER_TASKRUN",
	"NO_MMAP", "REGISTERED_FD_ONLY", "NO_SQARRAY",
}

func (f SetupFlags) String() string { return flagNames(uint32(f), setupNames) }

// Features is a set of IORING_FEAT_* flags that prints by name.
type Features uint32

var featureNames = []string{
	"SINGLE_MMAP", "NODROP", "SUBMIT_STABLE", "RW_CUR_POS", "CUR_PERSONALITY", "FAST_POLL",
	"POLL_32BITS", "SQPOLL_NONFIXED", "EXT_ARG", "NATIVE_WORKERS", "RSRC_TAGS", "CQE_SKIP",
	"LINKED_FILE", "REG_REG_RING", "RECVSEND_BUNDLE", "MIN_TIMEOUT", "RW_ATTR", "NO_IOWAIT",
}

func (f Features) String() string { return flagNames(uint32(f), featureNames) }

// Has reports whether every feature in want is present.
func (f Features) Has(want uint32) bool { return uint32(f)&want == want }

func flagNames(v uint32, names []string) string {
	if v == 0 {
		return "0"
	}
	var parts []string
	for i := 0; i < 32; i++ {
		if v&(1<<i) == 0 {
			continue
		}
		if i < len(names) {
			parts = append(parts, names[i])
		} else {
			parts = append(parts, fmt.Sprintf("1<<%d", i))
		}
	}
	return strings.Join(parts, "|")
}

// Info is what the running kernel's io_uring supports. It prints as a short
// report (String).
type Info struct {
	Kernel   string     // uname release
	Features Features   // reported by io_uring_setup
	Setup    SetupFlags // optional setup flags the kernel accepted, tried one by one
	Probe    *Probe     // supported opcodes
}

// optionalSetup are the flags Detect tries, each alone (with what it needs).
var optionalSetup = []uint32{
	IORING_SETUP_IOPOLL,
	IORING_SETUP_SQPOLL,
	IORING_SETUP_SUBMIT_ALL,
	IORING_SETUP_COOP_TASKRUN,
	IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
	IORING_SETUP_SINGLE_ISSUER,
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_NO_SQARRAY,
}

// Detect sets up small rings to find out what the kernel supports. An error
// means io_uring cannot be used at all here, and says why.
func Detect() (Info, error) {
	var info Info
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		info.Kernel = unix.ByteSliceToString(uts.Release[:])
	}
	r, err := Setup(4, nil)
	if err != nil {
		return info, err
	}
	info.Features = r.Features()
	info.Probe, err = r.Probe()
	r.Close()
	if err != nil {
		return info, err
	}
	for _, f := range optionalSetup {
		if t, err := Setup(4, &Params{Flags: f, SQThreadCPU: -1}); err == nil {
			info.Setup |= SetupFlags(f)
			t.Close()
		}
	}
	return info, nil
}

func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "io_uring on Linux %s\n", i.Kernel)
	fmt.Fprintf(&b, "  features: %s\n", i.Features)
	fmt.Fprintf(&b, "  setup flags accepted: %s\n", i.Setup)
	if i.Probe != nil {
		var names []string
		for _, op := range i.Probe.Ops() {
			names = append(names, op.String())
		}
		fmt.Fprintf(&b, "  opcodes (%d, last %s): %s\n", len(names), i.Probe.LastOp, strings.Join(names, " "))
	}
	return b.String()
}
