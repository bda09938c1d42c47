//go:build linux

package diskio

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadBufferWindows(t *testing.T) {
	data := make([]byte, 20000)
	rand.NewChaCha8([32]byte{2}).Read(data)
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	for _, c := range []struct {
		off int64
		n   int
	}{{0, 4096}, {1, 1}, {4095, 2}, {100, 9000}, {19990, 10}, {19990, 100}, {20000, 5}, {30000, 1}, {0, 0}} {
		b, err := f.ReadBuffer(c.off, c.n)
		end := min(c.off+int64(c.n), int64(len(data)))
		want := data[min(c.off, int64(len(data))):end]
		if int64(len(want)) < int64(c.n) {
			require.Equal(t, io.EOF, err, "%+v", c)
		} else {
			require.NoError(t, err, "%+v", c)
		}
		require.Equal(t, want, b.Bytes(), "%+v", c)
		b.Release()
		b.Release() // harmless
	}
	_, err = f.ReadBuffer(-1, 1)
	require.Error(t, err)
}
