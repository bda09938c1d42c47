//go:build linux

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The overhead preset, shortened: two goroutine counts on tmpfs and on a
// loop device over tmpfs, every row measured, system calls counted, the
// devices gone afterwards.
func TestOverhead(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (a loop device, mkfs.ext4, mount, perf events on a tracepoint)")
	}
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio not installed (apt-get install fio)")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not found (util-linux, e2fsprogs)")
		}
	}
	if _, err := syscallTracepoint(); err != nil {
		t.Skip(err.Error())
	}
	_, perfErr := exec.LookPath("perf")
	before := shmLeftovers(t)
	out, stderr, err := tiny(t, "-preset", "overhead", "-json", "-devices", "shm,loop", "-goroutines", "1,32", "-duration", "200ms")
	require.NoError(t, err, stderr)
	rep := decode(t, out)
	require.Equal(t, "overhead", rep.Preset)
	require.Len(t, rep.Results, 2*2*5, "two devices, two goroutine counts, five rows each")
	notes := strings.Join(rep.Notes, "\n")
	require.Contains(t, notes, "overhead: shm: a file on tmpfs")
	require.Contains(t, notes, "overhead: loop: ext4 on /dev/loop")
	labels := map[string]int{}
	for _, r := range rep.Results {
		require.Empty(t, r.Error, "%s/%s", r.Group, r.Label)
		require.Positive(t, r.Ops, "%s/%s", r.Group, r.Label)
		require.Len(t, r.Rounds, 2)
		require.Positive(t, r.CPUUsPerOp, "%s/%s", r.Group, r.Label)
		require.True(t, r.Direct, "%s/%s", r.Group, r.Label)
		labels[r.Label]++
		if r.Backend == "fio" {
			if perfErr == nil {
				require.Positive(t, r.SyscallsPerOp, "%s/%s: perf stat counted nothing", r.Group, r.Label)
			}
			continue
		}
		require.Positive(t, r.ThreadsPeak)
		require.Positive(t, r.SyscallsPerOp, "%s/%s", r.Group, r.Label)
		if r.Backend == "os.File" {
			// A pread each at least: the counter sees every thread.
			require.GreaterOrEqual(t, r.SyscallsPerOp, 0.9, "%s/%s", r.Group, r.Label)
			continue
		}
		require.LessOrEqual(t, r.LoopSleepsPerOp, r.LoopEntersPerOp, "%s/%s", r.Group, r.Label)
		if strings.HasPrefix(r.Group, "loop:") && r.Goroutines == 32 {
			// 32 readers of a block device keep reads in flight:
			// they go through the loop, which enters the kernel.
			require.Positive(t, r.LoopEntersPerOp, "%s/%s", r.Group, r.Label)
		}
	}
	for _, l := range []string{"uring", "aio", "os.File", "fio", "fio --fixedbufs --registerfiles"} {
		require.Equal(t, 4, labels[l], "rows labelled %q", l)
	}
	require.Equal(t, before, shmLeftovers(t), "the preset left files in /dev/shm")
	loops, err := exec.Command("losetup", "-a").Output()
	require.NoError(t, err)
	require.NotContains(t, string(loops), "testbench-overhead-", "a loop device is still attached")
}

func shmLeftovers(t *testing.T) []string {
	ents, err := os.ReadDir("/dev/shm")
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "testbench-overhead-") {
			names = append(names, e.Name())
		}
	}
	return names
}
