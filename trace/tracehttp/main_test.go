package tracehttp_test

import (
	"os"
	"testing"

	"github.com/diskio-go/diskio/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.InstallFilter() // DISKIO_TEST_SECCOMP
	os.Exit(m.Run())
}
