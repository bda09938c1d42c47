//go:build linux

package diskio

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStreamWriterMatchesData(t *testing.T) {
	for _, start := range []int64{0, 777, 4096} {
		path := filepath.Join(t.TempDir(), "w")
		// Existing bytes before start must survive.
		head := make([]byte, start)
		for i := range head {
			head[i] = 'h'
		}
		require.NoError(t, os.WriteFile(path, head, 0o600))
		f, err := OpenFile(path, os.O_RDWR, 0)
		require.NoError(t, err)
		w, err := f.NewStreamWriter(start, StreamOptions{BufferSize: 16 << 10, ReadAhead: 3})
		require.NoError(t, err)
		data := make([]byte, 300000)
		rng := rand.New(rand.NewPCG(uint64(start), 1))
		rand.NewChaCha8([32]byte{3}).Read(data)
		for p := data; len(p) > 0; {
			n := min(len(p), rng.IntN(40000))
			m, err := w.Write(p[:n])
			require.NoError(t, err)
			require.Equal(t, n, m)
			p = p[n:]
			if rng.IntN(10) == 0 {
				require.NoError(t, w.Flush())
			}
		}
		require.NoError(t, w.Sync())
		require.NoError(t, w.Close())
		fi, err := f.Stat()
		require.NoError(t, err)
		require.Equal(t, start+int64(len(data)), fi.Size())
		require.NoError(t, f.Close())
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, head, got[:start])
		require.True(t, string(data) == string(got[start:]), "stream from %d wrote different bytes", start)
	}
}
