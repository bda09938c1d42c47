//go:build linux

package diskio

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/sched"
)

func randomFile(t testing.TB, n int, seed byte) (string, []byte) {
	data := make([]byte, n)
	rand.NewChaCha8([32]byte{seed}).Read(data)
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path, data
}

// NoMerge reads every range on its own, even overlapping and duplicate
// ones, and the data still matches.
func TestReadManyNoMerge(t *testing.T) {
	ct := &countingTracer{}
	s, err := sched.New(sched.Options{Tracer: ct})
	require.NoError(t, err)
	defer s.Close()
	path, data := randomFile(t, 64<<10, 11)
	f, err := OpenFile(path, os.O_RDONLY, 0, WithScheduler(s))
	require.NoError(t, err)
	defer f.Close()
	ranges := []Range{{0, 100}, {50, 100}, {50, 100}, {4096, 4096}, {8192, 10}, {60000, 10000}, {70000, 5}, {3, 0}}
	bufs, err := f.ReadMany(ranges, ReadManyOptions{MaxMerge: NoMerge})
	require.NoError(t, err)
	for i, r := range ranges {
		lo, hi := min(r.Off, int64(len(data))), min(r.Off+int64(r.Len), int64(len(data)))
		require.Equal(t, data[lo:hi], bufs[i].Bytes(), "range %d", i)
		bufs[i].Release()
	}
	// One read per range with data to read (the empty one needs none).
	require.Equal(t, int64(len(ranges)-1), ct.reads.Load())
}

// In steady state a ReadMany allocates nothing on the heap and takes no
// memory from the scheduler (so no mmap) per range: Buffers, their
// memory and the working state are recycled.
func TestReadManySteadyStateNoAllocNoMmap(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	s, err := sched.New(sched.Options{})
	require.NoError(t, err)
	defer s.Close()
	path, data := randomFile(t, 4<<20, 12)
	f, err := OpenFile(path, os.O_RDONLY, 0, WithScheduler(s))
	require.NoError(t, err)
	defer f.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, opts := range []ReadManyOptions{{MaxMerge: NoMerge}, {MaxMerge: 128 << 10}} {
		ranges := make([]Range, 50)
		dst := make([]*Buffer, 0, len(ranges))
		round := func() {
			for i := range ranges {
				ranges[i] = Range{Off: rng.Int64N(int64(len(data))-4096) &^ 4095, Len: 4096}
			}
			var err error
			dst, err = f.appendReadMany(dst[:0], ranges, opts)
			if err != nil {
				panic(err)
			}
			for _, b := range dst {
				b.Release()
			}
		}
		for range 20 {
			round() // warm the pools
		}
		before := s.Stats().Buffers.Allocs
		allocs := testing.AllocsPerRun(100, round)
		require.Zero(t, allocs, "heap allocations per ReadMany of %d ranges, %+v", len(ranges), opts)
		require.Equal(t, before, s.Stats().Buffers.Allocs, "memory taken from the scheduler in steady state, %+v", opts)
	}
}

// ReadMany from 64 goroutines at once, each checking its bytes (run with
// -race); Buffers released in any order.
func TestReadManyConcurrent(t *testing.T) {
	path, data := randomFile(t, 2<<20+777, 13)
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			var dst []*Buffer
			for it := range 20 {
				ranges := make([]Range, 1+rng.IntN(60))
				for i := range ranges {
					ranges[i] = Range{Off: rng.Int64N(int64(len(data)) + 100), Len: rng.IntN(20000)}
				}
				opts := ReadManyOptions{MaxMerge: []int{NoMerge, 0, 16 << 10}[it%3], MaxGap: rng.IntN(8192)}
				var err error
				if dst, err = f.appendReadMany(dst[:0], ranges, opts); err != nil {
					errs <- err
					return
				}
				for i, r := range ranges {
					lo, hi := min(r.Off, int64(len(data))), min(r.Off+int64(r.Len), int64(len(data)))
					if string(dst[i].Bytes()) != string(data[lo:hi]) {
						errs <- io.ErrUnexpectedEOF
						return
					}
				}
				for _, i := range rng.Perm(len(dst)) {
					dst[i].Release()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
