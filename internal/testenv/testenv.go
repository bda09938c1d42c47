// Package testenv decides, for tests, whether a missing kernel backend is a
// reason to skip or a failure.
//
// On a developer laptop without io_uring (a container under Docker's default
// seccomp profile, an old kernel) the backend tests skip with the reason. CI
// sets DISKIO_REQUIRE_BACKENDS=uring,aio, and then the same absence fails the
// test, so a broken backend can never pass CI by skipping. DISKIO_TEST_SECCOMP
// (SeccompEnv) runs a test binary with io_uring, or io_uring and AIO, refused
// by a real seccomp filter, and those backends are then not required.
package testenv

import (
	"os"
	"strings"
	"testing"
)

// Required reports whether the environment variable DISKIO_REQUIRE_BACKENDS
// names backend ("uring", "aio", "odirect", ...) and no seccomp filter
// (SeccompEnv) refuses it: CI's uring,aio means aio alone under
// DISKIO_TEST_SECCOMP=uring, and neither under uring,aio, where the
// blocking backend, which needs no kernel queue, is what remains.
func Required(backend string) bool {
	if refusedBackend(backend) {
		return false
	}
	for _, b := range strings.Split(os.Getenv("DISKIO_REQUIRE_BACKENDS"), ",") {
		if strings.TrimSpace(b) == backend {
			return true
		}
	}
	return false
}

// Unavailable ends the test because backend cannot run here, for reason err:
// a skip normally, a fatal failure when the backend is required.
func Unavailable(tb testing.TB, backend string, err error) {
	tb.Helper()
	if Required(backend) {
		tb.Fatalf("backend %s is required (DISKIO_REQUIRE_BACKENDS) but unavailable: %v", backend, err)
	}
	if refusedBackend(backend) {
		tb.Skipf("backend %s refused by the seccomp filter (%s=%s): %v", backend, SeccompEnv, Refused(), err)
	}
	tb.Skipf("backend %s unavailable: %v", backend, err)
}
