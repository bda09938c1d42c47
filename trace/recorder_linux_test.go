//go:build linux

package trace_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

const blockSize = 4096

func newSched(t testing.TB, b sched.Backend, opts sched.Options) *sched.Scheduler {
	t.Helper()
	opts.Backend = b
	s, err := sched.New(opts)
	if err != nil {
		testenv.Unavailable(t, string(b), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// knownWorkload writes blocks 0..n-1 in order, fdatasyncs, reads them back
// in order, then makes one write that fails (EBADF: the fd is read-only).
func knownWorkload(t *testing.T, s *sched.Scheduler, f *os.File, n int) (rdonly int) {
	buf := testenv.AlignedBuf(t, blockSize)
	fd := int(f.Fd())
	for i := range n {
		buf[0] = byte(i)
		_, err := s.WriteAt(fd, buf, int64(i)*blockSize)
		require.NoError(t, err)
	}
	require.NoError(t, s.Fdatasync(fd))
	for i := range n {
		_, err := s.ReadAt(fd, buf, int64(i)*blockSize)
		require.NoError(t, err)
		require.Equal(t, byte(i), buf[0])
	}
	ro, err := os.Open(f.Name())
	require.NoError(t, err)
	t.Cleanup(func() { ro.Close() })
	_, err = s.WriteAt(int(ro.Fd()), buf, 0)
	require.ErrorIs(t, err, syscall.EBADF)
	return int(ro.Fd())
}

func TestRecordsCompleteAndOrdered(t *testing.T) {
	for _, b := range []sched.Backend{sched.URing, sched.AIO, sched.Blocking} {
		t.Run(string(b), func(t *testing.T) {
			rec := trace.New(trace.Config{})
			s := newSched(t, b, sched.Options{Tracer: rec, NoInline: true})
			f := testenv.DirectFile(t)
			const n = 32
			rdonly := knownWorkload(t, s, f, n)
			snap := rec.Snapshot()

			require.Zero(t, snap.Dropped)
			require.Equal(t, snap.Written, uint64(len(snap.Syscalls)+len(snap.Requests)))
			require.Len(t, snap.Requests, 2*n+2)
			var prev trace.Request
			for i, r := range snap.Requests {
				var op sched.Op
				var off int64
				switch {
				case i < n:
					op, off = sched.OpWrite, int64(i)*blockSize
				case i == n:
					op = sched.OpFdatasync
				case i < 2*n+1:
					op, off = sched.OpRead, int64(i-n-1)*blockSize
				default:
					op = sched.OpWrite
				}
				require.Equal(t, op, r.Op, "request %d", i)
				require.Equal(t, off, r.Off, "request %d", i)
				require.Equal(t, b, r.Backend)
				// On the blocking backend every request runs on its
				// caller; on Linux AIO so does the write to the
				// descriptor opened without O_DIRECT (a transfer slot).
				require.Equal(t, b == sched.Blocking || b == sched.AIO && i == 2*n+1, r.Inline, "request %d", i)
				if i == 2*n+1 {
					require.Equal(t, syscall.EBADF, r.Errno)
					require.Equal(t, int32(rdonly), r.Fd)
					require.Zero(t, r.N)
				} else {
					require.Zero(t, r.Errno, "request %d", i)
					require.Equal(t, int32(f.Fd()), r.Fd)
					if op != sched.OpFdatasync {
						require.Equal(t, blockSize, r.Len)
						require.Equal(t, blockSize, r.N)
					}
				}
				require.Equal(t, 1, r.Submits)
				require.Positive(t, r.Enqueue)
				require.True(t, r.Enqueue <= r.Submit && r.Submit <= r.Complete && r.Complete <= r.Resume, "%+v", r)
				if i > 0 {
					// One goroutine: each request starts after the last resumed.
					require.Greater(t, r.Seq, prev.Seq)
					require.GreaterOrEqual(t, r.Enqueue, prev.Resume)
				}
				prev = r
			}

			calls := map[sched.Syscall]int{}
			submitted := 0
			for i, c := range snap.Syscalls {
				require.LessOrEqual(t, c.Start, c.End)
				if i > 0 {
					require.Greater(t, c.Seq, snap.Syscalls[i-1].Seq)
				}
				calls[c.Call]++
				submitted += c.Submitted
			}
			switch b {
			case sched.URing:
				// Every request, and the loop's eventfd reads.
				require.GreaterOrEqual(t, submitted, len(snap.Requests))
				require.Positive(t, calls[sched.SysURingEnter])
			case sched.AIO:
				require.GreaterOrEqual(t, submitted, len(snap.Requests))
				require.Positive(t, calls[sched.SysIOSubmit])
			case sched.Blocking:
				// Exactly one system call per request.
				require.Equal(t, map[sched.Syscall]int{sched.SysPwrite: n + 1, sched.SysPread: n, sched.SysFdatasync: 1}, calls)
			}
		})
	}
}

// TestRingOverwrite fills a ring of 8 with 20 records: the newest 8 stay,
// 12 are counted as dropped; a Mark limits a snapshot to what followed.
func TestRingOverwrite(t *testing.T) {
	rec := trace.New(trace.Config{Records: 8})
	for i := range 5 {
		rec.SyscallDone(sched.SyscallEvent{Call: sched.SysIOSubmit, Start: int64(i), End: int64(i) + 1})
	}
	m := rec.Mark()
	for i := 5; i < 20; i++ {
		rec.SyscallDone(sched.SyscallEvent{Call: sched.SysIOSubmit, Start: int64(i), End: int64(i) + 1})
	}
	snap := rec.Snapshot()
	require.EqualValues(t, 20, snap.Written)
	require.EqualValues(t, 12, snap.Dropped)
	require.Len(t, snap.Syscalls, 8)
	for i, c := range snap.Syscalls {
		require.EqualValues(t, 12+i, c.Seq)
		require.EqualValues(t, 12+i, c.Start)
	}
	since := rec.SnapshotSince(m)
	require.EqualValues(t, 15, since.Written)
	require.EqualValues(t, 7, since.Dropped)
	require.Len(t, since.Syscalls, 8)

	// Not yet full: nothing dropped.
	rec = trace.New(trace.Config{Records: 8})
	for range 8 {
		rec.RequestDone(sched.RequestEvent{Op: sched.OpRead})
	}
	snap = rec.Snapshot()
	require.Zero(t, snap.Dropped)
	require.Len(t, snap.Requests, 8)

	// Paused: nothing recorded until resumed.
	rec = trace.New(trace.Config{Paused: true})
	rec.SyscallDone(sched.SyscallEvent{})
	rec.Resume()
	rec.SyscallDone(sched.SyscallEvent{})
	rec.Pause()
	rec.SyscallDone(sched.SyscallEvent{})
	require.EqualValues(t, 1, rec.Snapshot().Written)
}

// TestConcurrentWritersAndSnapshots: records are never torn, and every
// record written is either in a snapshot or counted as dropped.
func TestConcurrentWritersAndSnapshots(t *testing.T) {
	rec := trace.New(trace.Config{Records: 64})
	const writers, each = 4, 5000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var snaps sync.WaitGroup
	snaps.Add(1)
	go func() {
		defer snaps.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			check(t, rec.Snapshot())
		}
	}()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				v := int64(w*each + i)
				if i%2 == 0 {
					rec.SyscallDone(sched.SyscallEvent{Call: sched.SysPread, Start: v, End: 2 * v, Submitted: int(v % 1000), Reaped: int(v % 999)})
				} else {
					rec.RequestDone(sched.RequestEvent{Op: sched.OpRead, Fd: int32(v), Off: 3 * v, Len: int(v % 4096), N: int(v % 4095),
						Enqueue: v, Submit: v + 1, Complete: v + 2, Resume: v + 3, Backend: sched.URing})
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	snaps.Wait()
	final := rec.Snapshot()
	check(t, final)
	require.EqualValues(t, writers*each, final.Written)
	require.Len(t, final.Syscalls, 64-len(final.Requests))
}

func check(t *testing.T, snap *trace.Snapshot) {
	for _, c := range snap.Syscalls {
		v := c.Start
		if c.End != 2*v || c.Submitted != int(v%1000) || c.Reaped != int(v%999) || c.Call != sched.SysPread {
			t.Fatalf("torn syscall record %+v", c)
		}
	}
	for _, r := range snap.Requests {
		v := int64(r.Fd)
		if r.Off != 3*v || r.Len != int(v%4096) || r.N != int(v%4095) || r.Enqueue != v || r.Resume != v+3 || r.Backend != sched.URing {
			t.Fatalf("torn request record %+v", r)
		}
	}
	if snap.Written != snap.Dropped+uint64(len(snap.Syscalls)+len(snap.Requests)) {
		t.Fatalf("written %d != dropped %d + held %d", snap.Written, snap.Dropped, len(snap.Syscalls)+len(snap.Requests))
	}
}

func TestRecorderAllocatesNothing(t *testing.T) {
	rec := trace.New(trace.Config{})
	ev := sched.RequestEvent{Op: sched.OpRead, Err: syscall.EIO, Backend: sched.URing}
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		rec.RequestDone(ev)
		rec.SyscallDone(sched.SyscallEvent{Call: sched.SysURingEnter})
	}))
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	s := newSched(t, sched.URing, sched.Options{Tracer: rec, NoInline: true})
	f := testenv.DirectFile(t)
	buf := testenv.AlignedBuf(t, blockSize)
	_, err := s.WriteAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(500, func() {
		if _, err := s.ReadAt(int(f.Fd()), buf, 0); err != nil {
			panic(err)
		}
	}))
}

// waitOnDisk is the function the I/O-wait profile must name.
func waitOnDisk(t *testing.T, s *sched.Scheduler, fd int, buf []byte, n int) {
	for i := range n {
		_, err := s.ReadAt(fd, buf, int64(i%4)*blockSize)
		require.NoError(t, err)
	}
}

func TestWaitProfile(t *testing.T) {
	rec := trace.New(trace.Config{StackEvery: 2})
	s := newSched(t, sched.URing, sched.Options{Tracer: rec, NoInline: true})
	f := testenv.DirectFile(t)
	buf := testenv.AlignedBuf(t, 4*blockSize)
	_, err := s.WriteAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)
	waitOnDisk(t, s, int(f.Fd()), buf[:blockSize], 40)
	snap := rec.Snapshot()
	// 41 requests, every second one sampled, all from one stack: one
	// entry of 20 samples.
	require.Len(t, snap.Stacks, 1)
	require.EqualValues(t, 20, snap.Stacks[0].Count)
	require.EqualValues(t, 20, snap.StackSamples)
	require.Zero(t, snap.StacksDropped)
	require.Equal(t, 4096, snap.Stacks[0].Size)

	var out bytes.Buffer
	require.NoError(t, snap.WriteWaitProfile(&out))
	p, err := profile.Parse(bytes.NewReader(out.Bytes()))
	require.NoError(t, err)
	require.NoError(t, p.CheckValid())
	require.Len(t, p.Sample, 1)
	var count, wait int64
	for _, smp := range p.Sample {
		count += smp.Value[0]
		wait += smp.Value[1]
		leaf := smp.Location[0].Line[0].Function.Name
		require.True(t, strings.HasSuffix(leaf, "trace_test.waitOnDisk"), "leaf frame %s", leaf)
		require.Equal(t, []string{"read"}, smp.Label["op"])
	}
	require.EqualValues(t, 40, count) // 20 samples, each standing for 2
	require.Positive(t, wait)

	path := filepath.Join(t.TempDir(), "wait.pb.gz")
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
	top := pprofTop(t, path)
	// The waiter is the flat (leaf) entry: the first line of the table.
	lines := strings.Split(top, "\n")
	var first string
	for i, l := range lines {
		if strings.Contains(l, "flat%") && i+1 < len(lines) {
			first = lines[i+1]
			break
		}
	}
	require.Contains(t, first, "trace_test.waitOnDisk", "go tool pprof -top:\n%s", top)
	require.Contains(t, top, "trace_test.TestWaitProfile")

	var sys bytes.Buffer
	require.NoError(t, snap.WriteSyscallProfile(&sys))
	sp, err := profile.Parse(&sys)
	require.NoError(t, err)
	require.NoError(t, sp.CheckValid())
	calls := map[string]int64{}
	for _, smp := range sp.Sample {
		calls[smp.Location[0].Line[0].Function.Name] += smp.Value[0]
	}
	require.Positive(t, calls["io_uring_enter"])
}

func pprofTop(t *testing.T, path string) string {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to run pprof:", err)
	}
	out, err := exec.Command(gobin, "tool", "pprof", "-top", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

func TestChromeTrace(t *testing.T) {
	rec := trace.New(trace.Config{})
	s := newSched(t, sched.URing, sched.Options{Tracer: rec, NoInline: true})
	f := testenv.DirectFile(t)
	knownWorkload(t, s, f, 8)
	snap := rec.Snapshot()

	var out bytes.Buffer
	require.NoError(t, snap.WriteChrome(&out))
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Name string         `json:"name"`
			Cat  string         `json:"cat"`
			Tid  int            `json:"tid"`
			ID   uint64         `json:"id"`
			Ts   float64        `json:"ts"`
			Dur  float64        `json:"dur"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), "%s", out.Bytes())
	begins := map[string]int{}
	ends := map[string]int{}
	enters := 0
	for _, ev := range doc.TraceEvents {
		switch ev.Ph {
		case "X":
			require.Equal(t, "syscall", ev.Cat)
			require.GreaterOrEqual(t, ev.Dur, 0.0)
			if ev.Name == "io_uring_enter" {
				enters++
				require.Equal(t, 1, ev.Tid)
			}
		case "b":
			begins[ev.Name]++
		case "e":
			ends[ev.Name]++
		}
	}
	require.Positive(t, enters)
	require.Equal(t, begins, ends)
	require.Equal(t, 9, begins["write 4096"]) // 8, and the failed one
	require.Equal(t, 8, begins["read 4096"])
	require.Equal(t, 1, begins["fdatasync 0"])
	require.Equal(t, 18, begins["queued"])
	require.Equal(t, 18, begins["kernel"])
	require.Equal(t, 18, begins["wake-up"])
}

func TestJSONLinesAndSummary(t *testing.T) {
	rec := trace.New(trace.Config{})
	s := newSched(t, sched.URing, sched.Options{Tracer: rec, NoInline: true})
	f := testenv.DirectFile(t)
	knownWorkload(t, s, f, 8)
	snap := rec.Snapshot()

	var out bytes.Buffer
	require.NoError(t, snap.WriteJSONLines(&out))
	sc := bufio.NewScanner(&out)
	kinds := map[string]int{}
	var last float64 = -1
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		kinds[m["kind"].(string)]++
		seq := m["seq"].(float64)
		require.Greater(t, seq, last)
		last = seq
	}
	require.Equal(t, map[string]int{"request": len(snap.Requests), "syscall": len(snap.Syscalls)}, kinds)

	var sum bytes.Buffer
	require.NoError(t, snap.WriteSummary(&sum))
	text := sum.String()
	t.Log("\n" + text)
	require.Regexp(t, `(?m)^\s+read\s+4KiB\s+8\s+0\s+0\s`, text)
	require.Regexp(t, `(?m)^\s+write\s+4KiB\s+9\s+1\s`, text)
	require.Regexp(t, `(?m)^\s+io_uring_enter\s+\d+`, text)
	require.Contains(t, text, "system calls per request")

	dir := t.TempDir()
	require.NoError(t, snap.WriteFiles(filepath.Join(dir, "run")))
	for _, suffix := range []string{trace.SuffixWait, trace.SuffixSyscalls, trace.SuffixChrome, trace.SuffixJSONL, trace.SuffixSummary} {
		st, err := os.Stat(filepath.Join(dir, "run"+suffix))
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 5) // no temporary files left
}
