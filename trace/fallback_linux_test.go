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
	// Under a filter that refuses io_uring, TestBackendFallbackUnderSeccomp checks the fallback.
	testenv.SkipIfRefused(t, "uring", "io_uring_setup's EINVAL")
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

// TestBackendFallbackUnderSeccomp: under a real seccomp filter that
// refuses io_uring (or io_uring and Linux AIO), a scheduler started with
// Auto tells its recorder, and the summary names the backend it runs on
// and the refusals.
func TestBackendFallbackUnderSeccomp(t *testing.T) {
	for _, c := range testenv.Refusals {
		t.Run(c.Refused.String(), func(t *testing.T) {
			if !testenv.UnderFilter(t, c.Refused) {
				return
			}
			rec := trace.New(trace.Config{})
			s, err := sched.New(sched.Options{Tracer: rec})
			require.NoError(t, err)
			defer s.Close()
			f := testenv.DirectFile(t)
			_, err = s.WriteAt(int(f.Fd()), testenv.AlignedBuf(t, blockSize), 0)
			require.NoError(t, err)

			text := summary(t, rec.Snapshot())
			require.Contains(t, text, "backend: "+c.Backend+"\n")
			require.Contains(t, text, "fallbacks: 1\n  scheduler on "+c.Backend+": "+s.FallbackReason()+"\n")
			for _, r := range c.Reasons {
				require.Contains(t, text, r)
			}
		})
	}
}
