//go:build linux

package diskio

import (
	"os"
	"testing"

	"github.com/diskio-go/diskio/internal/benchfile"
)

func TestMain(m *testing.M) {
	code := m.Run()
	benchfile.Remove()
	os.Exit(code)
}
