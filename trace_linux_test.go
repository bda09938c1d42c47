//go:build linux

package diskio

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

// TestTraceEnvChild is the program under trace for the DISKIO_TRACE
// tests: it runs in a child process with the variables set.
func TestTraceEnvChild(t *testing.T) {
	mode := os.Getenv("DISKIO_TRACE_TEST_CHILD")
	if mode == "" {
		t.Skip("helper process for TestTraceEnv")
	}
	require.NotNil(t, Tracing())
	f, err := Create(filepath.Join(os.Getenv("DISKIO_TRACE_TEST_DIR"), "data"))
	require.NoError(t, err)
	p := make([]byte, 4096)
	for i := range 16 {
		_, err := f.WriteAt(p, int64(i)*4096)
		require.NoError(t, err)
	}
	for i := range 16 {
		_, err := f.ReadAt(p, int64(i)*4096)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	switch mode {
	case "signal":
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute) // until the parent's SIGTERM
		t.Fatal("not killed")
	case "periodic":
		time.Sleep(300 * time.Millisecond) // then return: no flush at exit
	case "flush":
		require.NoError(t, FlushTrace())
	case "stop":
		// FlushTrace ends the periodic writer and the signal handler.
		require.NoError(t, FlushTrace())
		ended := make(chan struct{})
		go func() { tracing.bg.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatal("the DISKIO_TRACE goroutines still run after FlushTrace")
		}
		jsonl := os.Getenv("DISKIO_TRACE") + trace.SuffixJSONL
		flushed, err := os.ReadFile(jsonl)
		require.NoError(t, err)
		f, err := Open(filepath.Join(os.Getenv("DISKIO_TRACE_TEST_DIR"), "data"))
		require.NoError(t, err)
		for i := range 16 {
			_, err := f.ReadAt(p, int64(i)*4096)
			require.NoError(t, err)
		}
		require.NoError(t, f.Close())
		time.Sleep(200 * time.Millisecond) // 10 periods of DISKIO_TRACE_EVERY
		now, err := os.ReadFile(jsonl)
		require.NoError(t, err)
		require.Equal(t, flushed, now, "the files were written after FlushTrace")
		// Another FlushTrace writes what was recorded since.
		require.NoError(t, FlushTrace())
		now, err = os.ReadFile(jsonl)
		require.NoError(t, err)
		require.NotEqual(t, flushed, now)
		// SIGTERM is the program's again: nothing catches it, so the
		// parent's kills the process.
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		t.Fatal("not killed: SIGTERM still caught")
	}
}

func traceChild(t *testing.T, mode string, env ...string) (*exec.Cmd, string) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTraceEnvChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{
		"DISKIO_TRACE=" + filepath.Join(dir, "run"),
		"DISKIO_TRACE_TEST_CHILD=" + mode,
		"DISKIO_TRACE_TEST_DIR=" + dir,
		"DISKIO_TRACE_STACKS=1",
	}, env...)...)
	return cmd, filepath.Join(dir, "run")
}

// killWhenReady starts cmd, waits for its "ready" line, runs check, sends
// it SIGTERM and checks that it died of it.
func killWhenReady(t *testing.T, cmd *exec.Cmd, check func()) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	require.Equal(t, "ready\n", line)
	check()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	ws := exit.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGTERM, "child did not die of SIGTERM: %v", err)
}

func TestTraceEnv(t *testing.T) {
	t.Run("signal", func(t *testing.T) {
		cmd, prefix := traceChild(t, "signal", "DISKIO_TRACE_EVERY=0")
		killWhenReady(t, cmd, func() {
			_, err := os.Stat(prefix + trace.SuffixChrome)
			require.ErrorIs(t, err, os.ErrNotExist, "written before the signal with DISKIO_TRACE_EVERY=0")
		})
		checkTraceFiles(t, prefix)
	})
	t.Run("periodic", func(t *testing.T) {
		cmd, prefix := traceChild(t, "periodic", "DISKIO_TRACE_EVERY=20ms")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		checkTraceFiles(t, prefix)
	})
	t.Run("flush", func(t *testing.T) {
		cmd, prefix := traceChild(t, "flush", "DISKIO_TRACE_EVERY=0", "DISKIO_TRACE_SIGNALS=0")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		checkTraceFiles(t, prefix)
	})
	t.Run("stop", func(t *testing.T) {
		cmd, prefix := traceChild(t, "stop", "DISKIO_TRACE_EVERY=20ms")
		killWhenReady(t, cmd, func() {})
		checkTraceFiles(t, prefix)
	})
	t.Run("sizes", func(t *testing.T) {
		cmd, prefix := traceChild(t, "flush", "DISKIO_TRACE_EVERY=0", "DISKIO_TRACE_SIGNALS=0",
			"DISKIO_TRACE_RECORDS=16", "DISKIO_TRACE_STACK_TABLE=2")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		txt, err := os.ReadFile(prefix + trace.SuffixSummary)
		require.NoError(t, err)
		require.Contains(t, string(txt), "(ring of 16 records, 1 KiB: DISKIO_TRACE_RECORDS)")
		require.Contains(t, string(txt), "table of 2 stacks")
		// The totals count all 32 reads and writes the ring lost.
		require.Regexp(t, `(?m)^\s+write\s+4KiB\s+16\s`, string(txt))
		require.Regexp(t, `(?m)^\s+read\s+4KiB\s+16\s`, string(txt))
	})
}

// directRefused returns a directory whose filesystem refuses O_DIRECT:
// tmpfs at /dev/shm before Linux 6.6, else a ramfs mounted for the test.
func directRefused(t *testing.T) string {
	if dir, err := os.MkdirTemp("/dev/shm", "diskio-test"); err == nil {
		t.Cleanup(func() { os.RemoveAll(dir) })
		fd, err := unix.Open(filepath.Join(dir, "probe"), unix.O_CREAT|unix.O_RDWR|unix.O_DIRECT, 0o644)
		if err == unix.EINVAL {
			return dir
		}
		if err == nil {
			unix.Close(fd)
		}
	}
	dir := t.TempDir()
	if err := unix.Mount("diskio-test", dir, "ramfs", 0, ""); err != nil {
		t.Skip("no filesystem that refuses O_DIRECT: tmpfs takes it, and mounting ramfs failed:", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, 0) })
	return dir
}

// TestFallbackFileInSummary: a File that asked for O_DIRECT on a
// filesystem that refuses it runs buffered, and says so once, to the
// scheduler's OnFallback and to its recorder's summary.
func TestFallbackFileInSummary(t *testing.T) {
	dir := directRefused(t)
	rec := trace.New(trace.Config{})
	var got []sched.Fallback
	s, err := sched.New(sched.Options{Tracer: rec, OnFallback: func(fb sched.Fallback) { got = append(got, fb) }})
	require.NoError(t, err)
	defer s.Close()
	got = nil // the scheduler's own, if it fell back
	path := filepath.Join(dir, "f")
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644, WithDirect(Direct), WithScheduler(s))
	require.NoError(t, err)
	require.False(t, f.Direct())
	_, err = f.WriteAt(make([]byte, 4096), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Len(t, got, 1)
	require.Equal(t, path, got[0].Path)
	require.Contains(t, got[0].Reason, "refused O_DIRECT")

	// A page-cache file and a direct one on ext4 are no fallback.
	f, err = OpenFile(filepath.Join(dir, "g"), os.O_RDWR|os.O_CREATE, 0o644, WithScheduler(s))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	f, err = OpenFile(filepath.Join(t.TempDir(), "h"), os.O_RDWR|os.O_CREATE, 0o644, WithDirect(Direct), WithScheduler(s))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Len(t, got, 1)

	var b strings.Builder
	require.NoError(t, rec.Snapshot().WriteSummary(&b))
	t.Log("\n" + b.String())
	require.Contains(t, b.String(), "  buffered, not O_DIRECT: "+path+": the filesystem ("+got[0].Reason[len("the filesystem ("):])
}

// checkTraceFiles: all files there, the 32 reads and writes in the JSON
// lines, and the wait profile attributes them to the child's test function.
func checkTraceFiles(t *testing.T, prefix string) {
	f, err := os.Open(prefix + trace.SuffixJSONL)
	require.NoError(t, err)
	defer f.Close()
	ops := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct{ Kind, Op string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		if rec.Kind == "request" {
			ops[rec.Op]++
		}
	}
	require.GreaterOrEqual(t, ops["write"], 16)
	require.GreaterOrEqual(t, ops["read"], 16)

	pf, err := os.Open(prefix + trace.SuffixWait)
	require.NoError(t, err)
	defer pf.Close()
	p, err := profile.Parse(pf)
	require.NoError(t, err)
	found := false
	for _, s := range p.Sample {
		for _, l := range s.Location {
			if strings.HasSuffix(l.Line[0].Function.Name, "diskio.TestTraceEnvChild") {
				found = true
			}
		}
	}
	require.True(t, found, "no wait sample under TestTraceEnvChild")
	for _, suffix := range []string{trace.SuffixSyscalls, trace.SuffixChrome, trace.SuffixSummary} {
		st, err := os.Stat(prefix + suffix)
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
}
