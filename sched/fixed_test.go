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
	h, err := s.Open(0, "stdin")
	require.NoError(t, err)
	require.Error(t, h.Register())
	require.NoError(t, h.Close())

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
	h, err := s.Open(fd, f.Name())
	require.NoError(t, err)
	require.NoError(t, h.Register())
	require.NoError(t, h.Register()) // idempotent
	require.True(t, h.Registered())

	w, err := s.AllocBuffer(3 * blockSize)
	require.NoError(t, err)
	fill(w, 7)
	r, err := s.AllocBuffer(3 * blockSize)
	require.NoError(t, err)
	n, err := h.WriteAt(w, blockSize)
	require.NoError(t, err)
	require.Equal(t, len(w), n)
	n, err = h.ReadAt(r, blockSize)
	require.NoError(t, err)
	require.Equal(t, len(r), n)
	require.Equal(t, w, r)
	rec.mu.Lock()
	for _, ev := range rec.requests {
		require.True(t, ev.Fixed, "%+v did not use the registered buffer", ev)
	}
	rec.mu.Unlock()

	// After the File's Close and close(2), a new file given the same
	// number gets the I/O, not the stale registered one.
	require.NoError(t, h.Close())
	require.Error(t, h.Close(), "a second Close")
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

// TestMemoryOutlivesClose: the scheduler owns its memory. Close empties
// its buffer cache, and AllocBuffer and GetBuffer fail with ErrClosed,
// but memory a caller still holds (from the registered arena, or mapped
// on its own when the arena is full) stays valid until it is given back;
// the arena is unmapped when its last block is back, not before.
func TestMemoryOutlivesClose(t *testing.T) {
	for _, b := range []Backend{URing, AIO, Blocking} {
		t.Run(string(b), func(t *testing.T) {
			s, err := New(Options{Backend: b, FixedBuffers: 4 * blockSize})
			if err != nil {
				testenv.Unavailable(t, string(b), err)
			}
			held, err := s.AllocBuffer(2 * blockSize) // the arena, on io_uring
			require.NoError(t, err)
			own, err := s.GetBuffer(4 * blockSize) // too large for what is left: mapped on its own
			require.NoError(t, err)
			cached, err := s.GetBuffer(blockSize)
			require.NoError(t, err)
			s.PutBuffer(cached)
			require.Equal(t, blockSize, s.Stats().Buffers.Cached)
			if s.arena != nil {
				require.True(t, s.arena.contains(held))
				require.False(t, s.arena.contains(own))
			}
			for i := range held {
				held[i] = byte(i)
			}
			require.NoError(t, s.Close())

			_, err = s.AllocBuffer(blockSize)
			require.ErrorIs(t, err, ErrClosed)
			_, err = s.GetBuffer(blockSize)
			require.ErrorIs(t, err, ErrClosed)
			require.Zero(t, s.Stats().Buffers.Cached, "Close left memory in the cache")
			// Still mapped, and ours.
			for i := range held {
				require.Equal(t, byte(i), held[i])
			}
			clear(own)
			if s.arena != nil {
				require.True(t, s.arena.mapped(), "the arena was unmapped with a block out")
			}
			s.PutBuffer(own) // after Close: freed, not kept
			require.Zero(t, s.Stats().Buffers.Cached)
			require.NoError(t, s.FreeBuffer(held))
			if s.arena != nil {
				require.False(t, s.arena.mapped(), "the arena outlived its last block")
				// Its addresses are the kernel's again: a mapping
				// made there now is not mistaken for an arena block.
				require.False(t, s.arena.contains(held))
			}
		})
	}
}

// TestBufferCache: GetBuffer serves a size class from what PutBuffer gave
// back, without a new allocation; the cache is bounded.
func TestBufferCache(t *testing.T) {
	s := newSched(t, URing, Options{})
	b, err := s.GetBuffer(5000)
	require.NoError(t, err)
	require.Len(t, b, 5000)
	require.Equal(t, 2*blockSize, cap(b))
	allocs := s.Stats().Buffers.Allocs
	s.PutBuffer(b[:10])
	c, err := s.GetBuffer(8000)
	require.NoError(t, err)
	require.Equal(t, unsafe.SliceData(b), unsafe.SliceData(c))
	require.Equal(t, allocs, s.Stats().Buffers.Allocs)
	s.PutBuffer(c)
	var big [][]byte
	for range maxCachedBytes/(1<<20) + 4 {
		m, err := s.GetBuffer(1 << 20)
		require.NoError(t, err)
		big = append(big, m)
	}
	for _, m := range big {
		s.PutBuffer(m)
	}
	require.LessOrEqual(t, s.Stats().Buffers.Cached, maxCachedBytes)
	_, err = s.GetBuffer(0)
	require.Error(t, err)
}
