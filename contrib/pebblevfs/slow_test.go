//go:build linux

package pebblevfs

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// A WAL sync the disk holds back reaches Pebble's EventListener.DiskSlow,
// naming the WAL, through the scheduler's slow-request reports (no disk
// health checks); a healthy run reports nothing. The WAL's syncs are
// latency-class, the flushed tables background.
func TestDiskSlowFromScheduler(t *testing.T) {
	var mu sync.Mutex
	var events []vfs.DiskSlowInfo
	var hold atomic.Bool
	const threshold = 50 * time.Millisecond
	s, err := sched.New(sched.Options{
		SlowThreshold: threshold,
		OnSlow: DiskSlow(func(info vfs.DiskSlowInfo) {
			mu.Lock()
			events = append(events, info)
			mu.Unlock()
		}),
		Faults: sched.FaultFunc(func(a sched.Attempt) sched.Fault {
			if hold.Load() && a.Op == sched.OpFdatasync {
				return sched.Fault{Delay: 3 * threshold}
			}
			return sched.Fault{}
		}),
	})
	require.NoError(t, err)
	defer s.Close()
	if s.Backend() == sched.Blocking {
		t.Skip("the blocking backend (io_uring and Linux AIO refused) has no slow-request detection (sched.Options.SlowThreshold)")
	}
	db, err := pebble.Open(t.TempDir(), &pebble.Options{FS: New(diskio.WithScheduler(s)), Logger: testLogger{t}})
	require.NoError(t, err)
	for i := range 100 {
		require.NoError(t, db.Set(testKey(i), testValue(i), pebble.Sync))
	}
	mu.Lock()
	require.Empty(t, events, "a healthy run reported slow requests")
	mu.Unlock()

	hold.Store(true)
	require.NoError(t, db.Set(testKey(100), testValue(100), pebble.Sync))
	hold.Store(false)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events) > 0
	}, time.Second, time.Millisecond)
	mu.Lock()
	ev := events[0]
	mu.Unlock()
	require.True(t, strings.HasSuffix(ev.Path, ".log"), "path %q", ev.Path)
	require.Equal(t, vfs.OpTypeSyncData, ev.OpType)
	require.GreaterOrEqual(t, ev.Duration, threshold)

	require.NoError(t, db.Flush())
	st := s.Stats()
	require.Positive(t, st.Ops[sched.OpFdatasync][sched.Latency].Requests(), "WAL syncs")
	require.Positive(t, st.Ops[sched.OpWrite][sched.Background].Requests(), "flushed table writes")
	require.NoError(t, db.Close())
}
