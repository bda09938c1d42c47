//go:build linux

package diskio

import (
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// Changes to the size made through other descriptors are seen, as with
// os.File (reported by the DirFS work: the size used to be fixed at open).
func TestSizeChangedElsewhereIsSeen(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(name, []byte("hello"), 0o644))
	r, err := Open(name)
	require.NoError(t, err)
	defer r.Close()

	require.NoError(t, os.WriteFile(name, []byte("hello, world"), 0o644)) // grown elsewhere
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "hello, world", string(b))
	fi, err := r.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(12), fi.Size())
	end, err := r.Seek(0, io.SeekEnd)
	require.NoError(t, err)
	require.Equal(t, int64(12), end)

	require.NoError(t, os.Truncate(name, 2)) // shrunk elsewhere
	buf := make([]byte, 12)
	n, err := r.ReadAt(buf, 0)
	require.Equal(t, io.EOF, err)
	require.Equal(t, "he", string(buf[:n]))
}

// An O_APPEND writer appends after what another descriptor appended.
func TestAppendAfterOtherWriter(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	f, err := OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString("one\n")
	require.NoError(t, err)
	require.NoError(t, f.Sync()) // no padding outstanding
	other, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = other.WriteString("two\n")
	require.NoError(t, err)
	require.NoError(t, other.Close())
	_, err = f.WriteString("three\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, "one\ntwo\nthree\n", string(got))
}

// SEEK_DATA and SEEK_HOLE reach the kernel, as with os.File.
func TestSeekDataHole(t *testing.T) {
	name := filepath.Join(t.TempDir(), "sparse")
	f, err := Create(name)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt(make([]byte, 4096), 1<<20) // data at 1 MiB, a hole before
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	o, err := os.Open(name)
	require.NoError(t, err)
	defer o.Close()
	for _, whence := range []int{3, 4} { // SEEK_DATA, SEEK_HOLE
		want, werr := o.Seek(0, whence)
		got, gerr := f.Seek(0, whence)
		require.Equal(t, werr == nil, gerr == nil)
		require.Equal(t, want, got, "whence %d", whence)
	}
}

// Readers racing an appender never get bytes past the logical end that
// were not written: no padding, and no block the read met before the
// write's data landed.
func TestReadRacingAppendSeesNoPadding(t *testing.T) {
	f, err := OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o644, WithDirect(Direct))
	require.NoError(t, err)
	defer f.Close()
	if !f.Direct() {
		t.Skip("no O_DIRECT here: no padding to see")
	}
	rec := make([]byte, 100)
	for i := range rec {
		rec[i] = 0xab
	}
	var written atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 400; i++ {
			if _, err := f.Write(rec); err != nil {
				t.Error(err)
				return
			}
			written.Add(int64(len(rec)))
			if i%4 == 0 {
				if err := f.Sync(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	buf := make([]byte, 4096)
	for {
		select {
		case <-done:
			return
		default:
		}
		off := max(written.Load()-150, 0)
		n, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		for i, c := range buf[:n] {
			if c != 0xab {
				t.Fatalf("byte %d (offset %d) is %#x: a byte past the end that was not written", i, off+int64(i), c)
			}
		}
	}
}
