//go:build linux

package sched

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/testenv"
)

func TestFixedStatusReported(t *testing.T) {
	s := newSched(t, URing, Options{})
	st := s.Fixed()
	require.True(t, st.Buffers, st.String())
	require.True(t, st.Files, st.String())

	s = newSched(t, URing, Options{FixedBuffers: -1, FixedFiles: -1, IOWQMaxWorkers: -1})
	require.Equal(t, "fixed buffers: no (disabled by Options.FixedBuffers); fixed files: no (disabled by Options.FixedFiles); io_uring workers: not capped (disabled by Options.IOWQMaxWorkers)", s.Fixed().String())
	require.Error(t, s.RegisterFile(0))

	for _, b := range []Backend{AIO, Blocking} {
		s := newSched(t, b, Options{})
		require.False(t, s.Fixed().Buffers)
		require.Contains(t, s.Fixed().String(), "only the io_uring backend")
	}
}

// An AllocBuffer the arena cannot serve still returns usable memory, and
// Fixed reports it. A 12 KiB arena holds one 12 KiB buffer (not a power of
// two: it takes the arena's 12 KiB, not a 16 KiB block), which once freed
// serves as an 8 KiB block; or an 8 KiB and a 4 KiB block, then nothing.
func TestFixedArenaOverflowReported(t *testing.T) {
	s := newSched(t, URing, Options{FixedBuffers: 3 * blockSize})
	require.True(t, s.Fixed().Buffers, s.Fixed().String())
	whole, err := s.AllocBuffer(3 * blockSize)
	require.NoError(t, err)
	require.True(t, s.arena.contains(whole))
	require.NoError(t, s.FreeBuffer(whole))
	reused, err := s.AllocBuffer(2 * blockSize)
	require.NoError(t, err)
	require.Equal(t, unsafe.SliceData(whole), unsafe.SliceData(reused), "the freed 12 KiB block serves 8 KiB")
	require.NoError(t, s.FreeBuffer(reused))

	s = newSched(t, URing, Options{FixedBuffers: 3 * blockSize})
	var in [][]byte
	for _, n := range []int{2 * blockSize, blockSize} {
		b, err := s.AllocBuffer(n)
		require.NoError(t, err)
		require.True(t, s.arena.contains(b), "%d bytes", n)
		in = append(in, b)
	}
	require.Zero(t, s.Fixed().Unregistered)
	for _, n := range []int{blockSize, 3 * blockSize} {
		out, err := s.AllocBuffer(n)
		require.NoError(t, err)
		require.False(t, s.arena.contains(out), "%d bytes", n)
		require.NoError(t, s.FreeBuffer(out))
	}
	require.EqualValues(t, 2, s.Fixed().Unregistered)
	require.Contains(t, s.Fixed().String(), "2 AllocBuffer calls did not fit in the arena")
	for _, b := range in {
		require.NoError(t, s.FreeBuffer(b))
	}
}

func TestFixedBuffersAndFilesRoundTrip(t *testing.T) {
	rec := &recorder{}
	s := newSched(t, URing, Options{Tracer: rec, NoInline: true})
	f := testenv.DirectFile(t)
	fd := int(f.Fd())
	require.NoError(t, s.RegisterFile(fd))
	require.NoError(t, s.RegisterFile(fd)) // idempotent

	w, err := s.AllocBuffer(3 * blockSize)
	require.NoError(t, err)
	fill(w, 7)
	r, err := s.AllocBuffer(3 * blockSize)
	require.NoError(t, err)
	n, err := s.WriteAt(fd, w, blockSize)
	require.NoError(t, err)
	require.Equal(t, len(w), n)
	n, err = s.ReadAt(fd, r, blockSize)
	require.NoError(t, err)
	require.Equal(t, len(r), n)
	require.Equal(t, w, r)
	rec.mu.Lock()
	for _, ev := range rec.requests {
		require.True(t, ev.Fixed, "%+v did not use the registered buffer", ev)
	}
	rec.mu.Unlock()

	// After UnregisterFile and close, a new file given the same number
	// gets the I/O, not the stale registered one.
	require.NoError(t, s.UnregisterFile(fd))
	name := f.Name()
	require.NoError(t, f.Close())
	other := filepath.Join(t.TempDir(), "other")
	g, err := os.OpenFile(other, os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o600)
	require.NoError(t, err)
	defer g.Close()
	if int(g.Fd()) != fd {
		t.Logf("fd %d was not reused (got %d); checking the write only", fd, g.Fd())
	}
	_, err = s.WriteAt(int(g.Fd()), w, 0)
	require.NoError(t, err)
	got, err := os.ReadFile(other)
	require.NoError(t, err)
	require.Equal(t, w, got)
	old, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Len(t, old, 4*blockSize)
	require.Equal(t, make([]byte, blockSize), old[:blockSize], "the closed file was written after UnregisterFile")

	require.NoError(t, s.FreeBuffer(w))
	require.NoError(t, s.FreeBuffer(r))
	require.Error(t, s.FreeBuffer(r), "double free not detected")
}

func TestArenaExhaustionFallsBack(t *testing.T) {
	s := newSched(t, URing, Options{FixedBuffers: 8 * blockSize})
	var bufs [][]byte
	for i := 0; i < 4; i++ { // 4 x 8 KiB blocks fill the 32 KiB arena...
		b, err := s.AllocBuffer(2 * blockSize)
		require.NoError(t, err)
		require.True(t, s.arena.contains(b))
		bufs = append(bufs, b)
	}
	b, err := s.AllocBuffer(blockSize) // ...so this one is mapped separately
	require.NoError(t, err)
	require.False(t, s.arena.contains(b))
	f := testenv.DirectFile(t)
	_, err = s.WriteAt(int(f.Fd()), b, 0) // and works all the same
	require.NoError(t, err)
	require.NoError(t, s.FreeBuffer(b))
	require.NoError(t, s.FreeBuffer(bufs[0]))
	again, err := s.AllocBuffer(2 * blockSize) // a freed block is reused
	require.NoError(t, err)
	require.Equal(t, &bufs[0][0], &again[0])
}
