//go:build linux

package sched

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
)

// Many calls started by one goroutine are all in flight together and each
// Wait returns its own result, on every backend.
func TestStartManyThenWait(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{})
			f := testenv.DirectFile(t)
			const n = 64
			want := testenv.AlignedBuf(t, n*blockSize)
			fill(want, 3)
			var writes [n]Call
			for i := range writes {
				writes[i] = s.StartWriteAt(int(f.Fd()), want[i*blockSize:(i+1)*blockSize], int64(i*blockSize))
			}
			for i := range writes {
				m, err := writes[i].Wait()
				require.NoError(t, err)
				require.Equal(t, blockSize, m)
			}
			got := testenv.AlignedBuf(t, n*blockSize+blockSize)
			var reads [n + 1]Call
			for i := range reads {
				// The last read starts at the end of the file.
				reads[i] = s.StartReadAt(int(f.Fd()), got[i*blockSize:(i+1)*blockSize], int64(i*blockSize))
			}
			for i := n; i >= 0; i-- { // any order
				m, err := reads[i].Wait()
				require.NoError(t, err)
				if i == n {
					require.Zero(t, m, "read at end of file")
				} else {
					require.Equal(t, blockSize, m)
				}
			}
			require.True(t, bytes.Equal(want, got[:n*blockSize]))
		})
	}
}

func TestStartErrors(t *testing.T) {
	s := newSched(t, URing, Options{})
	f := testenv.DirectFile(t)
	buf := testenv.AlignedBuf(t, 2*blockSize)

	_, err := s.WriteAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)
	// An error reaches the Wait of the call that caused it.
	_, err = s.StartReadAt(int(f.Fd()), buf[:blockSize], 1).Wait()
	require.ErrorContains(t, err, "alignment")
	_, err = s.StartWriteAt(-1, buf[:blockSize], 0).Wait()
	require.Error(t, err)

	_, err = Call{}.Wait()
	require.ErrorContains(t, err, "zero Call")

	require.NoError(t, s.Close())
	_, err = s.StartReadAt(int(f.Fd()), buf[:blockSize], 0).Wait()
	require.ErrorIs(t, err, ErrClosed)
}

func TestStartWaitZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	s := newSched(t, URing, Options{})
	f := testenv.DirectFile(t)
	buf := testenv.AlignedBuf(t, 8*blockSize)
	_, err := s.WriteAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)
	var calls [8]Call
	allocs := testing.AllocsPerRun(200, func() {
		for i := range calls {
			calls[i] = s.StartReadAt(int(f.Fd()), buf[i*blockSize:(i+1)*blockSize], int64(i*blockSize))
		}
		for i := range calls {
			if _, err := calls[i].Wait(); err != nil {
				t.Fatal(err)
			}
		}
	})
	require.Zero(t, allocs)
}

// Reads gathered in a Batch all complete after Submit, each with its own
// result, on every backend (the blocking backend does them at once).
func TestBatch(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{})
			f := testenv.DirectFile(t)
			const n = 32
			want := testenv.AlignedBuf(t, n*blockSize)
			fill(want, 5)
			_, err := s.WriteAt(int(f.Fd()), want, 0)
			require.NoError(t, err)

			got := testenv.AlignedBuf(t, n*blockSize)
			batch := s.Batch()
			batch.Submit() // empty: nothing happens
			var calls [n]Call
			for i := range calls {
				calls[i] = batch.StartReadAt(int(f.Fd()), got[i*blockSize:(i+1)*blockSize], int64(i*blockSize))
			}
			batch.Submit()
			for i := range calls {
				m, err := calls[i].Wait()
				require.NoError(t, err)
				require.Equal(t, blockSize, m)
			}
			require.True(t, bytes.Equal(want, got))

			require.NoError(t, s.Close())
			batch = s.Batch()
			c := batch.StartReadAt(int(f.Fd()), got[:blockSize], 0)
			batch.Submit()
			_, err = c.Wait()
			require.ErrorIs(t, err, ErrClosed)
		})
	}
}

// WaitAll waits for every call of the batch, round after round (its state
// is reused), with more calls than slots, on every backend; each Call's
// Wait then returns at once with its own result.
func TestBatchWaitAll(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{Entries: 8})
			f := testenv.DirectFile(t)
			const n = 40
			want := testenv.AlignedBuf(t, n*blockSize)
			fill(want, 9)
			_, err := s.WriteAt(int(f.Fd()), want, 0)
			require.NoError(t, err)
			got := testenv.AlignedBuf(t, n*blockSize)
			batch := s.Batch()
			batch.WaitAll() // nothing started: returns at once
			for round := range 5 {
				clear(got)
				var calls [n]Call
				for i := range calls {
					calls[i] = batch.StartReadAt(int(f.Fd()), got[i*blockSize:(i+1)*blockSize], int64(i*blockSize))
				}
				batch.WaitAll() // submits, too
				for i := range calls {
					require.True(t, calls[i].Ready(), "round %d call %d", round, i)
					m, err := calls[i].Wait()
					require.NoError(t, err)
					require.Equal(t, blockSize, m)
				}
				require.True(t, bytes.Equal(want, got), "round %d", round)
			}
			// A failing call is reported by its own Wait.
			bad := batch.StartReadAt(-1, got[:blockSize], 0)
			ok := batch.StartReadAt(int(f.Fd()), got[:blockSize], 0)
			batch.WaitAll()
			_, err = bad.Wait()
			require.Error(t, err)
			_, err = ok.Wait()
			require.NoError(t, err)
		})
	}
}

func TestBatchWaitAllZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	s := newSched(t, URing, Options{})
	f := testenv.DirectFile(t)
	buf := testenv.AlignedBuf(t, 16*blockSize)
	_, err := s.WriteAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)
	batch := s.Batch()
	var calls [16]Call
	allocs := testing.AllocsPerRun(200, func() {
		for i := range calls {
			calls[i] = batch.StartReadAt(int(f.Fd()), buf[i*blockSize:(i+1)*blockSize], int64(i*blockSize))
		}
		batch.WaitAll()
		for i := range calls {
			if _, err := calls[i].Wait(); err != nil {
				panic(err)
			}
		}
	})
	require.Zero(t, allocs)
}
