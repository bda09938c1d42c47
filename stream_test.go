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

	"github.com/diskio-go/diskio/sched"
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
		{0, StreamOptions{BufferSize: 4096, ReadAhead: 50}},    // 64 KiB reads
		{777, StreamOptions{BufferSize: 4096, ReadAhead: 50}},  // from inside a read
		{0, StreamOptions{BufferSize: 16 << 10, ReadAhead: 9}}, // 32 KiB reads, 6 in flight
		{0, StreamOptions{BufferSize: 4096, ReadAhead: 1}},     // one-deep: read when needed
		{5000, StreamOptions{BufferSize: 64 << 10, ReadAhead: 1}},
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

// NextBuffer hands out the stream's buffers without a copy, mixed with
// Read; Buffers held while the stream goes on keep their bytes.
func TestStreamReaderNextBuffer(t *testing.T) {
	data := make([]byte, 1<<20+4321)
	rand.NewChaCha8([32]byte{3}).Read(data)
	path := filepath.Join(t.TempDir(), "stream")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	for _, opts := range []StreamOptions{{BufferSize: 4096, ReadAhead: 50}, {BufferSize: 64 << 10, ReadAhead: 3}, {BufferSize: 4096, ReadAhead: 1}} {
		r, err := f.NewStreamReader(100, opts)
		require.NoError(t, err)
		var got []byte
		type heldBuf struct {
			b   *Buffer
			off int // where its bytes start in got
		}
		var held []heldBuf
		p := make([]byte, 1000)
		for i := 0; ; i++ {
			if i%3 == 2 {
				n, err := r.Read(p) // a partial Read, then NextBuffer takes the rest
				got = append(got, p[:n]...)
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				continue
			}
			b, err := r.NextBuffer()
			if err == io.EOF {
				require.Nil(t, b)
				break
			}
			require.NoError(t, err)
			require.NotEmpty(t, b.Bytes())
			held = append(held, heldBuf{b, len(got)})
			got = append(got, b.Bytes()...)
			if len(held) > 7 {
				// Still intact after the stream read on into other memory.
				h := held[0]
				require.Equal(t, got[h.off:h.off+len(h.b.Bytes())], h.b.Bytes())
				h.b.Release()
				held = held[1:]
			}
		}
		require.True(t, bytes.Equal(data[100:], got), "%+v", opts)
		for _, h := range held {
			require.Equal(t, data[100+h.off:100+h.off+len(h.b.Bytes())], h.b.Bytes())
			h.b.Release()
		}
		require.NoError(t, r.Close())
	}
}

// A stream of small buffers with a deep read-ahead reads several buffers
// at a time, and NextBuffer still hands out one BufferSize piece each.
// Pieces outlive the stream's move to later reads, and the memory of a
// read returns to the pool once all its pieces are released.
func TestStreamReaderGroupedReads(t *testing.T) {
	var reads []sched.RequestEvent
	tr := &eventTracer{fn: func(ev sched.RequestEvent) {
		if ev.Op == sched.OpRead {
			reads = append(reads, ev)
		}
	}}
	s, err := sched.New(sched.Options{Tracer: tr})
	require.NoError(t, err)
	defer s.Close()
	const size = 1<<20 + 3*4096 + 100 // the last read is short
	data := make([]byte, size)
	rand.NewChaCha8([32]byte{4}).Read(data)
	path := filepath.Join(t.TempDir(), "stream")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := OpenFile(path, os.O_RDONLY, 0, WithScheduler(s))
	require.NoError(t, err)
	defer f.Close()
	opts := StreamOptions{BufferSize: 4096, ReadAhead: 50}
	group := streamGroup(opts)
	require.Equal(t, 16, group)
	scan := func() {
		reads = reads[:0]
		r, err := f.NewStreamReader(0, opts)
		require.NoError(t, err)
		var held []*Buffer // every piece, held until the end
		var off int
		for {
			b, err := r.NextBuffer()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			want := min(4096, size-off)
			require.Len(t, b.Bytes(), want, "piece at %d", off)
			off += want
			held = append(held, b)
		}
		require.Equal(t, size, off)
		require.NoError(t, r.Close())
		off = 0
		for _, b := range held {
			require.True(t, bytes.Equal(data[off:off+len(b.Bytes())], b.Bytes()), "piece at %d changed", off)
			off += len(b.Bytes())
			b.Release()
		}
		// One read per 16 pieces, each 64 KiB at a 64 KiB boundary.
		require.Len(t, reads, (size+group*4096-1)/(group*4096))
		for _, ev := range reads {
			require.Equal(t, group*4096, ev.Len)
			require.Zero(t, ev.Off%int64(group*4096))
		}
	}
	scan()
	allocs := s.Stats().Buffers.Allocs
	scan()
	require.Equal(t, allocs, s.Stats().Buffers.Allocs, "the second scan took new memory: the first one's was not returned")
}

// A one-deep stream's reads take the scheduler's idle fast path.
func TestStreamReaderOneDeepInline(t *testing.T) {
	var inline, total int
	tr := &eventTracer{fn: func(ev sched.RequestEvent) {
		if ev.Op == sched.OpRead {
			total++
			if ev.Inline {
				inline++
			}
		}
	}}
	s, err := sched.New(sched.Options{Tracer: tr})
	require.NoError(t, err)
	defer s.Close()
	path := filepath.Join(t.TempDir(), "stream")
	require.NoError(t, os.WriteFile(path, make([]byte, 256<<10), 0o600))
	f, err := OpenFile(path, os.O_RDONLY, 0, WithScheduler(s))
	require.NoError(t, err)
	defer f.Close()
	r, err := f.NewStreamReader(0, StreamOptions{BufferSize: 4096, ReadAhead: 1})
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, r)
	require.NoError(t, err)
	require.Equal(t, int64(256<<10), n)
	require.NoError(t, r.Close())
	require.Equal(t, 64, total)
	require.Equal(t, total, inline)
}

// eventTracer calls fn for every request; one goroutine at a time here.
type eventTracer struct{ fn func(sched.RequestEvent) }

func (e *eventTracer) SyscallDone(sched.SyscallEvent)    {}
func (e *eventTracer) RequestDone(ev sched.RequestEvent) { e.fn(ev) }
