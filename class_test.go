//go:build linux

package diskio

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

// A File's class applies to its requests, and a slow request names the
// File; Close takes both off the descriptors.
func TestWithClassAndSlowName(t *testing.T) {
	reports := make(chan sched.SlowIO, 16)
	s, err := sched.New(sched.Options{
		Backend:       sched.URing,
		SlowThreshold: 50 * time.Millisecond,
		OnSlow:        func(ev sched.SlowIO) { reports <- ev },
		Faults: sched.FaultFunc(func(a sched.Attempt) sched.Fault {
			if a.Op == sched.OpFdatasync {
				return sched.Fault{Delay: 120 * time.Millisecond}
			}
			return sched.Fault{}
		}),
	})
	if err != nil {
		testenv.Unavailable(t, "uring", err)
	}
	defer s.Close()
	path := filepath.Join(t.TempDir(), "wal")
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644, WithScheduler(s), WithDirect(PageCache), WithClass(sched.Latency))
	require.NoError(t, err)
	require.Equal(t, sched.Latency, f.handle.Class())
	require.Equal(t, sched.Latency, f.bf.Class())
	_, err = f.Write([]byte("commit"))
	require.NoError(t, err)
	require.NoError(t, f.Datasync())
	ev := <-reports
	require.Equal(t, path, ev.Name)
	require.Equal(t, sched.OpFdatasync, ev.Op)
	require.Equal(t, sched.Latency, ev.Class)
	st := s.Stats()
	require.EqualValues(t, 1, st.Ops[sched.OpFdatasync][sched.Latency].Requests())
	fd := f.dataFd
	require.NoError(t, f.Close())
	// The class was the File's: a file given the same descriptor number
	// starts unclassified.
	g, err := OpenFile(path, os.O_RDONLY, 0, WithScheduler(s), WithDirect(PageCache))
	require.NoError(t, err)
	defer g.Close()
	if g.dataFd == fd {
		t.Log("the descriptor number was reused")
	}
	require.Equal(t, sched.Unclassified, g.handle.Class())

	_, err = OpenFile(path, os.O_RDONLY, 0, WithScheduler(s), WithClass(sched.NumClasses))
	require.Error(t, err)
}
