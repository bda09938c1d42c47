// Package testenv decides, for tests, whether a missing kernel backend is a
// reason to skip or a failure.
//
// On a developer laptop without io_uring (a container under Docker's default
// seccomp profile, an old kernel) the backend tests skip with the reason. CI
// sets DISKIO_REQUIRE_BACKENDS=uring,aio, and then the same absence fails the
// test, so a broken backend can never pass CI by skipping.
package testenv

import (
	"os"
	"strings"
	"testing"
)

// Required reports whether the environment variable DISKIO_REQUIRE_BACKENDS
// names backend ("uring", "aio", "odirect", ...).
func Required(backend string) bool {
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
	tb.Skipf("backend %s unavailable: %v", backend, err)
}
