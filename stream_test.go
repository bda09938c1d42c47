//go:build linux

package diskio

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStreamReaderMatchesFile(t *testing.T) {
	data := make([]byte, 3<<20+12345)
	rand.NewChaCha8([32]byte{1}).Read(data)
	path := filepath.Join(t.TempDir(), "stream")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()

	for _, tc := range []struct {
		off  int64
		opts StreamOptions
	}{
		{0, StreamOptions{}},
		{0, StreamOptions{BufferSize: 4096, ReadAhead: 50}},
		{777, StreamOptions{BufferSize: 100000, ReadAhead: 3}}, // rounded up to the alignment
		{int64(len(data)) - 5, StreamOptions{BufferSize: 8192, ReadAhead: 2}},
		{int64(len(data)), StreamOptions{}},
	} {
		r, err := f.NewStreamReader(tc.off, tc.opts)
		require.NoError(t, err)
		// Odd-sized reads cross buffer boundaries.
		var got bytes.Buffer
		buf := make([]byte, 7777)
		for {
			n, err := r.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
		}
		require.NoError(t, r.Close())
		require.True(t, bytes.Equal(data[tc.off:], got.Bytes()), "stream from %d with %+v differs", tc.off, tc.opts)
		_, err = r.Read(buf)
		require.ErrorIs(t, err, os.ErrClosed)
	}
}

// Closing a stream with reads in flight waits for them and frees the
// buffers; the file stays usable.
func TestStreamReaderCloseEarly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stream")
	require.NoError(t, os.WriteFile(path, make([]byte, 4<<20), 0o600))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.NewStreamReader(0, StreamOptions{BufferSize: 64 << 10, ReadAhead: 16})
	require.NoError(t, err)
	_, err = r.Read(make([]byte, 10))
	require.NoError(t, err)
	require.NoError(t, r.Close())
	n, err := f.ReadAt(make([]byte, 100), 0)
	require.NoError(t, err)
	require.Equal(t, 100, n)
}
