//go:build linux

package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/mem"
)

// DirectFile opens a new file for O_DIRECT reading and writing in the
// test's temporary directory, closed at cleanup. Where the filesystem
// refuses O_DIRECT the test ends as Unavailable("odirect") says.
func DirectFile(tb testing.TB) *os.File {
	tb.Helper()
	f, err := os.OpenFile(filepath.Join(tb.TempDir(), "data"), os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o600)
	if err != nil {
		Unavailable(tb, "odirect", err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// AlignedBuf returns n bytes of page-aligned memory outside the Go heap
// (fit for O_DIRECT), unmapped at cleanup.
func AlignedBuf(tb testing.TB, n int) []byte {
	tb.Helper()
	b, err := mem.Map(n)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mem.Unmap(b) })
	return b
}
