package testenv

import (
	"fmt"
	"os"
	"testing"

	"github.com/diskio-go/diskio/internal/seccomp"
)

// SeccompEnv names the system-call families a test binary refuses itself
// with a seccomp filter (internal/seccomp) before any test runs, where its
// TestMain calls InstallFilter: "uring" refuses io_uring as Docker's
// default profile does, "uring,aio" Linux AIO as well. So
//
//	DISKIO_TEST_SECCOMP=uring go test ./...
//
// runs the suite as a container would, with the scheduler on Linux AIO
// (blocking system calls under "uring,aio"). Required then drops the
// refused backends: tests that need one skip, saying the filter refused
// it. Child processes inherit the variable and the filter.
const SeccompEnv = "DISKIO_TEST_SECCOMP"

// installed is what InstallFilter installed in this process.
var installed seccomp.Set

// InstallFilter installs the filter SeccompEnv names, if it names one; a
// TestMain calls it before m.Run. A value it cannot read, or a filter the
// kernel refuses, ends the process with status 2: the tests would
// otherwise run with the backends they were to do without, and pass for
// the wrong reason.
func InstallFilter() {
	set, err := refusedByEnv()
	if err == nil && set != 0 {
		err = seccomp.Install(set)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", SeccompEnv, err)
		os.Exit(2)
	}
	installed = set
}

// Main is the TestMain of a package that needs nothing more: the filter
// SeccompEnv names, then the tests.
func Main(m *testing.M) {
	InstallFilter()
	os.Exit(m.Run())
}

// Refused returns the families SeccompEnv names (none when it is unset
// or unreadable): the backends a test run does without.
func Refused() seccomp.Set {
	set, _ := refusedByEnv()
	return set
}

func refusedByEnv() (seccomp.Set, error) {
	return seccomp.Parse(os.Getenv(SeccompEnv))
}

// refusedBackend reports whether SeccompEnv refuses backend ("uring",
// "aio"; the names Required takes).
func refusedBackend(backend string) bool {
	b, err := seccomp.Parse(backend)
	return err == nil && b != 0 && Refused()&b == b
}

// UnderFilter makes the calling test's body run under a filter refusing
// exactly set. Where this process's TestMain installed set it reports
// true, and the body runs here; otherwise it runs the test in a child
// process with SeccompEnv=set (RunChild), which adds its filter to the
// one it inherits, and reports false, and the caller returns. A process
// that refuses more than set cannot run the body (filters only add up):
// the test skips. The package's TestMain must call InstallFilter.
func UnderFilter(t *testing.T, set seccomp.Set) bool {
	t.Helper()
	if Refused() != installed {
		t.Fatalf("%s=%s, but no filter installed: the package's TestMain must call testenv.InstallFilter", SeccompEnv, Refused())
	}
	switch {
	case installed == set:
		return true
	case installed&^set != 0:
		t.Skipf("this process refuses %s (%s=%s); the test wants %s alone", installed&^set, SeccompEnv, installed, set)
	}
	RunChild(t, SeccompEnv+"="+set.String())
	return false
}

// SkipIfRefused skips a test that makes backend fail on purpose to see
// what follows: under a filter that refuses backend, the refusal comes
// first and the test would see that instead. what says what the test
// checks, for the skip message.
func SkipIfRefused(tb testing.TB, backend, what string) {
	tb.Helper()
	if refusedBackend(backend) {
		tb.Skipf("%s: backend %s refused by the seccomp filter (%s=%s)", what, backend, SeccompEnv, Refused())
	}
}

// Refusal is a container's refusal and what the scheduler's start-up
// must make of it (sched.New with Auto, sched.Default).
type Refusal struct {
	Refused seccomp.Set
	Backend string   // the backend it must start on
	Reasons []string // what FallbackReason must say of each backend skipped
}

// Refusals are the containers the fallback tests run in: one that
// refuses io_uring, as Docker's default profile does, and one that
// refuses Linux AIO too.
var Refusals = []Refusal{
	{seccomp.URing, "aio", []string{"uring: io_uring_setup: operation not permitted (io_uring disabled by sysctl kernel.io_uring_disabled or blocked by seccomp"}},
	{seccomp.URing | seccomp.AIO, "blocking", []string{"uring: io_uring_setup: operation not permitted", "; aio: io_setup: operation not permitted"}},
}
