//go:build linux

package diskio

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/sched"
)

func TestSchedulerOf(t *testing.T) {
	s, err := sched.New(sched.Options{})
	require.NoError(t, err)
	defer s.Close()
	got, err := SchedulerOf(WithDirect(PageCache), WithScheduler(s))
	require.NoError(t, err)
	require.Same(t, s, got)
	def, err := sched.Default()
	require.NoError(t, err)
	got, err = SchedulerOf()
	require.NoError(t, err)
	require.Same(t, def, got)
}
