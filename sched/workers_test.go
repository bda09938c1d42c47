//go:build linux

package sched

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/uring"
)

// Fixed reports the worker cap the kernel accepted, the option and (for
// Default's Options) the environment set it, and the backends without
// workers say so.
func TestWorkerCapReported(t *testing.T) {
	t.Setenv("DISKIO_IOWQ_MAX_WORKERS", "1") // New reads no environment
	w := newSched(t, URing, Options{}).Fixed().Workers
	require.True(t, w.Capped, w.String())
	require.Equal(t, uring.MaxWorkers{Bounded: defaultIOWQMaxWorkers, Unbounded: defaultIOWQMaxWorkers}, w.Max)
	require.Equal(t, "io_uring workers: at most 4 bounded + 4 unbounded", w.String())

	w = newSched(t, URing, Options{IOWQMaxWorkers: 2}).Fixed().Workers
	require.Equal(t, uring.MaxWorkers{Bounded: 2, Unbounded: 2}, w.Max)

	opts, err := OptionsFromEnv()
	require.NoError(t, err)
	w = newSched(t, URing, opts).Fixed().Workers
	require.Equal(t, uring.MaxWorkers{Bounded: 1, Unbounded: 1}, w.Max)

	for _, bad := range []string{"lots", "0"} {
		t.Setenv("DISKIO_IOWQ_MAX_WORKERS", bad)
		_, err = OptionsFromEnv()
		require.ErrorContains(t, err, "DISKIO_IOWQ_MAX_WORKERS")
	}

	t.Setenv("DISKIO_IOWQ_MAX_WORKERS", "-1")
	opts, err = OptionsFromEnv()
	require.NoError(t, err)
	require.Equal(t, -1, opts.IOWQMaxWorkers)
	w = newSched(t, URing, Options{IOWQMaxWorkers: -1}).Fixed().Workers
	require.False(t, w.Capped)
	require.Contains(t, w.String(), "disabled by Options.IOWQMaxWorkers")

	for _, b := range []Backend{AIO, Blocking} {
		w := newSched(t, b, Options{}).Fixed().Workers
		require.False(t, w.Capped)
		require.Contains(t, w.String(), "only io_uring has worker threads")
	}
}

// Reads alone leave the loop unlocked (locking would start the runtime's
// template thread); the first write locks it, so that io_uring keeps one
// worker pool.
func TestLoopLocksOnFirstWrite(t *testing.T) {
	s := newSched(t, URing, Options{NoInline: true})
	f := testenv.DirectFile(t)
	buf := testenv.AlignedBuf(t, blockSize)
	_, err := s.ReadAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)
	require.False(t, s.locked.Load(), "locked after a read")
	_, err = s.WriteAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)
	require.True(t, s.locked.Load(), "not locked after a write")
}
