//go:build linux

package trace_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

// TestBackendFallbackInSummary: a scheduler that falls back from io_uring
// to Linux AIO (setup flags no kernel knows make io_uring_setup fail)
// reports it once to OnFallback and to its recorder, whose summary names
// the backend, what it means, and why.
func TestBackendFallbackInSummary(t *testing.T) {
	testenv.SkipIfRefused(t, "uring", "io_uring_setup's EINVAL") // TestBackendFallbackUnderSeccomp checks the refusal
	t.Setenv("DISKIO_BACKEND", "blocking") // New reads no environment
	rec := trace.New(trace.Config{})
	var got []sched.Fallback
	opts := sched.Options{Tracer: rec, OnFallback: func(fb sched.Fallback) { got = append(got, fb) }}
	opts.SetupFlags = 1 << 30
	s, err := sched.New(opts)
	if err != nil {
		testenv.Unavailable(t, "aio", err)
	}
	defer s.Close()
	require.Equal(t, sched.AIO, s.Backend())
	require.Len(t, got, 1)
	require.Equal(t, sched.AIO, got[0].Backend)
	require.Empty(t, got[0].Path)
	require.Equal(t, s.FallbackReason(), got[0].Reason)
	require.Contains(t, got[0].String(), "scheduler runs on aio (uring: io_uring_setup: invalid argument")

	f := testenv.DirectFile(t)
	buf := testenv.AlignedBuf(t, blockSize)
	_, err = s.WriteAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)

	text := summary(t, rec.Snapshot())
	require.Contains(t, text, "backend: aio\n  aio: Linux AIO is asynchronous only for O_DIRECT files")
	require.Contains(t, text, "fallbacks: 1\n  scheduler on aio: uring: io_uring_setup: invalid argument")

	// A backend asked for is no fallback: nothing reported, but the
	// summary still names it.
	rec = trace.New(trace.Config{})
	got = nil
	s2 := newSched(t, sched.AIO, sched.Options{Tracer: rec, OnFallback: func(fb sched.Fallback) { got = append(got, fb) }})
	_, err = s2.WriteAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)
	require.Empty(t, got)
	text = summary(t, rec.Snapshot())
	require.Contains(t, text, "backend: aio\n  aio: Linux AIO is asynchronous only")
	require.Contains(t, text, "fallbacks: none reported")
}
