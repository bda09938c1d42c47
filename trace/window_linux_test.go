//go:build linux

package trace_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

// sampleAt records one request whose stack is depth frames of recursion
// deep, so that each depth is a distinct stack.
func sampleAt(rec *trace.Recorder, depth int, ev sched.RequestEvent) {
	if depth > 0 {
		sampleAt(rec, depth-1, ev)
		return
	}
	rec.RequestDone(ev)
}

func summary(t *testing.T, snap *trace.Snapshot) string {
	var b bytes.Buffer
	require.NoError(t, snap.WriteSummary(&b))
	t.Log("\n" + b.String())
	return b.String()
}

// TestDropsCounted: a ring of 8 records and a stack table of 4 entries
// get 40 requests and 40 system calls from 10 distinct stacks. The
// timeline keeps 8 records and says 72 were dropped; the stack table
// keeps the samples of the stacks it has room for and counts the others
// as dropped, and the summary says both; the totals count everything.
func TestDropsCounted(t *testing.T) {
	rec := trace.New(trace.Config{Records: 8, StackEvery: 1, Stacks: 4})
	for i := range 40 {
		rec.SyscallDone(sched.SyscallEvent{Call: sched.SysIOSubmit, Start: int64(i), End: int64(i) + 1, Submitted: 1})
		sampleAt(rec, i%10, sched.RequestEvent{Op: sched.OpRead, Len: 4096, N: 4096, Backend: sched.AIO, Enqueue: int64(i), Submit: int64(i), Complete: int64(i) + 5, Resume: int64(i) + 10})
	}
	snap := rec.Snapshot()
	require.EqualValues(t, 80, snap.Written)
	require.EqualValues(t, 72, snap.Dropped)
	require.Len(t, snap.Requests, 4)
	require.Len(t, snap.Syscalls, 4)

	require.EqualValues(t, 40, snap.StackSamples)
	var kept uint64
	for _, st := range snap.Stacks {
		kept += st.Count
	}
	require.Positive(t, snap.StacksDropped, "10 stacks cannot fit 4 entries")
	require.Equal(t, snap.StackSamples, kept+snap.StacksDropped)
	require.LessOrEqual(t, len(snap.Stacks), 4)

	require.Len(t, snap.Ops, 1)
	require.EqualValues(t, 40, snap.Ops[0].Count, "totals count what the ring dropped")
	require.Len(t, snap.Calls, 1)
	require.EqualValues(t, 40, snap.Calls[0].Count)

	text := summary(t, snap)
	require.Regexp(t, `(?m)^diskio trace: 40 requests, 40 system calls in `, text)
	require.Regexp(t, `(?m)^\s+read\s+4KiB\s+40\s`, text)
	require.Contains(t, text, fmt.Sprintf("%d stack samples (1 request in 1) in %d distinct stacks; %d samples dropped (new stacks once the table of 4 stacks",
		kept, len(snap.Stacks), snap.StacksDropped))
	require.Contains(t, text, "8 of 80 records; 72 dropped (ring of 8 records")

	// The wait profile counts every sample kept.
	var count int64
	for _, smp := range snap.WaitProfile().Sample {
		count += smp.Value[0]
	}
	require.EqualValues(t, kept, count)

	// Since a mark: only what followed.
	m := rec.Mark()
	for i := range 6 {
		rec.SyscallDone(sched.SyscallEvent{Call: sched.SysIOSubmit, Start: int64(100 + i), End: int64(101 + i)})
		sampleAt(rec, 0, sched.RequestEvent{Op: sched.OpRead, Len: 4096, Enqueue: int64(100 + i), Resume: int64(110 + i)})
	}
	since := rec.SnapshotSince(m)
	require.EqualValues(t, 6, since.Ops[0].Count)
	require.EqualValues(t, 6, since.Calls[0].Count)
	require.EqualValues(t, 6, since.StackSamples)
	require.EqualValues(t, 12, since.Written)
	require.EqualValues(t, 4, since.Dropped)
}

// TestWaitProfileCoversWholeRun: with a timeline of 64 records, 10,000
// requests from one stack, every one sampled, are all in the profile.
func TestWaitProfileCoversWholeRun(t *testing.T) {
	rec := trace.New(trace.Config{Records: 64, StackEvery: 1})
	for i := range 10000 {
		sampleAt(rec, 1, sched.RequestEvent{Op: sched.OpWrite, Len: 65536, Enqueue: int64(i), Resume: int64(i) + 1000})
	}
	snap := rec.Snapshot()
	require.Len(t, snap.Stacks, 1)
	require.EqualValues(t, 10000, snap.Stacks[0].Count)
	require.EqualValues(t, 10000*1000, snap.Stacks[0].Wait)
	require.Len(t, snap.Requests, 64)
	require.Zero(t, snap.StacksDropped)
}

// TestSummaryStatesWindowsAndFiles: the summary says what span the totals
// cover and which part of it the timeline holds, and WriteFiles lists
// every file with its size, its own included.
func TestSummaryStatesWindowsAndFiles(t *testing.T) {
	rec := trace.New(trace.Config{Records: 16, StackEvery: 4})
	start := sched.Now()
	for i := range 100 {
		ts := start + int64(i)*1e4 // one every 10µs
		rec.RequestDone(sched.RequestEvent{Op: sched.OpRead, Len: 4096, N: 4096, Backend: sched.URing, Enqueue: ts, Submit: ts, Complete: ts + 1000, Resume: ts + 2000})
	}
	for sched.Now() < start+2e6 {
		time.Sleep(time.Millisecond)
	}
	snap := rec.Snapshot()
	require.GreaterOrEqual(t, snap.End-snap.Start, int64(2e6))
	text := summary(t, snap)
	// The timeline: the last 16 requests, 152µs from the first's enqueue
	// to the last's resume.
	require.Contains(t, text, "timeline (Chrome trace, JSON lines): the last 152.0µs (")
	require.Contains(t, text, "16 of 100 records; 84 dropped (ring of 16 records, 1 KiB")
	require.Regexp(t, `wait profile: the whole [0-9.]+m?s: 25 stack samples \(1 request in 4\) in 1 distinct stacks; 0 samples dropped`, text)
	require.Contains(t, text, "backend: uring\n")
	require.Contains(t, text, "fallbacks: none reported")

	dir := t.TempDir()
	prefix := filepath.Join(dir, "run")
	require.NoError(t, snap.WriteFiles(prefix))
	txt, err := os.ReadFile(prefix + trace.SuffixSummary)
	require.NoError(t, err)
	for _, suffix := range []string{trace.SuffixWait, trace.SuffixSyscalls, trace.SuffixChrome, trace.SuffixJSONL, trace.SuffixSummary} {
		st, err := os.Stat(prefix + suffix)
		require.NoError(t, err)
		re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta("run"+suffix) + `\s+(\d+) bytes`)
		m := re.FindSubmatch(txt)
		require.NotNil(t, m, "%s not listed in:\n%s", suffix, txt)
		n, _ := strconv.Atoi(string(m[1]))
		require.EqualValues(t, st.Size(), n, suffix)
	}
	p, err := os.Open(prefix + trace.SuffixWait)
	require.NoError(t, err)
	defer p.Close()
	prof, err := profile.Parse(p)
	require.NoError(t, err)
	require.Equal(t, snap.End-snap.Start, prof.DurationNanos)
	require.True(t, strings.HasPrefix(string(txt), "diskio trace: 100 requests"))
}
