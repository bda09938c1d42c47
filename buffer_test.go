//go:build linux

package diskio

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/sched"
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

func TestReadManyMergesAndMatches(t *testing.T) {
	data := make([]byte, 1<<20+333)
	rand.NewChaCha8([32]byte{4}).Read(data)
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	rng := rand.New(rand.NewPCG(7, 7))
	var ranges []Range
	for i := 0; i < 300; i++ {
		ranges = append(ranges, Range{Off: rng.Int64N(int64(len(data)) + 100), Len: rng.IntN(10000)})
	}
	ranges = append(ranges, Range{Off: 10, Len: 20}, Range{Off: 10, Len: 20}, Range{Off: 25, Len: 100}) // duplicates, overlaps
	for _, opts := range []ReadManyOptions{{}, {MaxMerge: 4096}, {MaxMerge: 1 << 20, MaxGap: 64 << 10}} {
		bufs, err := f.ReadMany(ranges, opts)
		require.NoError(t, err)
		require.Len(t, bufs, len(ranges))
		for i, r := range ranges {
			lo := min(r.Off, int64(len(data)))
			hi := min(r.Off+int64(r.Len), int64(len(data)))
			require.Equal(t, data[lo:hi], bufs[i].Bytes(), "range %d %+v with %+v", i, r, opts)
		}
		for _, b := range bufs {
			b.Release()
		}
	}
}

type countingTracer struct{ reads atomic.Int64 }

func (c *countingTracer) SyscallDone(sched.SyscallEvent) {}
func (c *countingTracer) RequestDone(ev sched.RequestEvent) {
	if ev.Op == sched.OpRead {
		c.reads.Add(1)
	}
}

// Neighbouring ranges really are read together.
func TestReadManyIssuesFewerReads(t *testing.T) {
	ct := &countingTracer{}
	s, err := sched.New(sched.Options{Tracer: ct})
	require.NoError(t, err)
	defer s.Close()
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, make([]byte, 64<<10), 0o600))
	f, err := OpenFile(path, os.O_RDONLY, 0, WithScheduler(s))
	require.NoError(t, err)
	defer f.Close()
	var ranges []Range
	for off := int64(0); off < 64<<10; off += 1000 {
		ranges = append(ranges, Range{Off: off, Len: 500})
	}
	bufs, err := f.ReadMany(ranges, ReadManyOptions{MaxMerge: 32 << 10, MaxGap: 1000})
	require.NoError(t, err)
	for _, b := range bufs {
		b.Release()
	}
	require.Equal(t, int64(2), ct.reads.Load(), "%d ranges in 64 KiB with 32 KiB merges", len(ranges))
}
