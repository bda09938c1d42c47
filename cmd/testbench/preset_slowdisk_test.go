//go:build linux

package main

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
)

// On a loop device throttled to 500 reads/s, 3,000 goroutines each read
// 4 KiB: os.File holds a thread per waiting read (and with its limit
// lowered to 300 threads dies of it), diskio finishes with a handful.
func TestSlowdisk(t *testing.T) {
	// Where io_uring and Linux AIO are both refused, the blocking backend
	// holds a thread per waiting read, as os.File does.
	testenv.SkipIfRefused(t, "aio", "diskio's thread bound on a slow disk")
	if why := slowdiskSkip(); why != "" {
		t.Skip(why)
	}
	d, err := newSlowDisk(t.TempDir(), &files{})
	require.NoError(t, err)
	defer func() { require.NoError(t, d.close()) }()
	ctx := context.Background()
	const g, iops = 3000, 500
	throttled := time.Duration(g/iops) * time.Second / 2 // unthrottled, the reads take ~0.3 s

	crashed := d.run(ctx, slowSetting{Goroutines: g, IOPS: iops, MaxThreads: 300}, sideOS, time.Minute)
	t.Logf("%+v", crashed)
	require.Empty(t, crashed.Error)
	require.Contains(t, crashed.Outcome, "fatal error: thread exhaustion")
	require.Contains(t, crashed.Outcome, "program exceeds 300-thread limit")
	require.Equal(t, "exit status 2", crashed.ExitStatus)
	require.Less(t, crashed.Reads, int64(g))

	for _, side := range []string{sideOS, sideDiskio} {
		r := d.run(ctx, slowSetting{Goroutines: g, IOPS: iops}, side, time.Minute)
		t.Logf("%+v", r)
		require.Empty(t, r.Error)
		require.Equal(t, "finished", r.Outcome, r.StderrHead)
		require.Equal(t, int64(g), r.Reads)
		require.Zero(t, r.ReadErrors)
		require.Equal(t, int64(g), r.Checked, "every read's data checked")
		require.Zero(t, r.BadData)
		require.GreaterOrEqual(t, r.Elapsed, throttled, "the reads were not throttled")
		require.Positive(t, r.DiskReads, "the child's cgroup saw no reads")
		require.Positive(t, r.DeviceReads, "the loop device saw no reads")
		if side == sideOS {
			require.Greater(t, r.PeakThreads, 100)
		} else {
			require.Less(t, r.PeakThreads, runtime.GOMAXPROCS(0)+10)
		}
	}
}
