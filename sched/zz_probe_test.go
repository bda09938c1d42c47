//go:build linux

package sched

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestZZProbe(t *testing.T) {
	rec := &recorder{}
	s := newSched(t, URing, Options{Tracer: rec})
	end := busy(t, s)
	defer end()
	f, err := os.OpenFile(filepath.Join("/tmp", "zzprobe"), os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
	require.NoError(t, err)
	defer os.Remove(f.Name())
	fd := int(f.Fd())
	require.NoError(t, s.SetClass(fd, Latency))
	buf := make([]byte, 700)
	for i := range 300 {
		_, err := s.WriteAt(fd, buf, int64(i)*700)
		require.NoError(t, err)
		if i%50 == 49 {
			require.NoError(t, s.Fdatasync(fd))
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	ring, caller, probed := 0, 0, 0
	for _, ev := range rec.requests {
		if ev.Op != OpWrite {
			continue
		}
		switch {
		case !ev.Inline:
			ring++
		case ev.Submits > 1:
			probed++
		default:
			caller++
		}
	}
	t.Logf("ring %d, came back %d, straight to caller %d", ring, probed, caller)
}
