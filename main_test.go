//go:build linux

package diskio

import (
	"os"
	"testing"

	"github.com/diskio-go/diskio/internal/benchfile"
	"github.com/diskio-go/diskio/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.InstallFilter() // DISKIO_TEST_SECCOMP
	code := m.Run()
	benchfile.Remove()
	os.Exit(code)
}
