//go:build linux

package sched

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
)

// TestFallbackUnderSeccomp: under a real seccomp filter (a child process
// of this test binary, or this one under DISKIO_TEST_SECCOMP), New with
// Auto starts on the first backend the filter leaves, FallbackReason
// names each refusal, OnFallback gets it once before New returns, the
// process-wide scheduler falls back the same way, and requests are
// served. Asking for a refused backend fails with EPERM.
func TestFallbackUnderSeccomp(t *testing.T) {
	for _, c := range testenv.Refusals {
		t.Run(c.Refused.String(), func(t *testing.T) {
			if !testenv.UnderFilter(t, c.Refused) {
				return
			}
			want := Backend(c.Backend)
			var got []Fallback
			s, err := New(Options{OnFallback: func(fb Fallback) { got = append(got, fb) }})
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, want, s.Backend())
			for _, r := range c.Reasons {
				require.Contains(t, s.FallbackReason(), r)
			}
			require.Equal(t, []Fallback{{Backend: want, Reason: s.FallbackReason()}}, got)
			t.Logf("%s", got[0])

			f := testenv.DirectFile(t)
			buf := testenv.AlignedBuf(t, 2*blockSize)
			for i := range buf {
				buf[i] = byte(i * 7)
			}
			n, err := s.WriteAt(int(f.Fd()), buf, blockSize)
			require.NoError(t, err)
			require.Equal(t, len(buf), n)
			require.NoError(t, s.Fdatasync(int(f.Fd())))
			back := testenv.AlignedBuf(t, len(buf))
			n, err = s.ReadAt(int(f.Fd()), back, blockSize)
			require.NoError(t, err)
			require.Equal(t, len(buf), n)
			require.Equal(t, buf, back)

			for _, b := range []Backend{URing, AIO} {
				if want == b {
					break
				}
				_, err := New(Options{Backend: b})
				require.ErrorContains(t, err, "operation not permitted", "%s under a filter refusing it", b)
			}

			if os.Getenv("DISKIO_BACKEND") == "" {
				d, err := Default()
				require.NoError(t, err)
				require.Equal(t, want, d.Backend())
				require.Equal(t, s.FallbackReason(), d.FallbackReason())
			}
		})
	}
}
