package raftwal

import (
	"testing"

	"github.com/diskio-go/diskio/internal/testenv"
)

// TestMain installs the filter DISKIO_TEST_SECCOMP names.
func TestMain(m *testing.M) { testenv.Main(m) }
