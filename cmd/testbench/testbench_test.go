//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/crash"
	"github.com/diskio-go/diskio/internal/testenv"
)

func TestMain(m *testing.M) {
	maybeRunBusy()     // each -busy procs process re-executes this binary
	crash.MaybeChild() // and so does the crash mode
	maybeRunChild()    // and every isolated run
	slowdiskChild()    // and the slowdisk preset (TestSlowdisk)

	testenv.InstallFilter() // DISKIO_TEST_SECCOMP
	os.Exit(m.Run())
}

// The crash mode kills appending children and finds every acknowledged
// record; diskcheck does it over loopback TCP.
func TestCrashModes(t *testing.T) {
	for _, mode := range []string{"crash", "diskcheck"} {
		var out bytes.Buffer
		err := run(context.Background(), []string{mode, "-n", "2", "-dir", t.TempDir()}, &out, io.Discard, &files{})
		require.NoError(t, err, out.String())
		require.Contains(t, out.String(), "no acknowledged record lost")
	}
	err := run(context.Background(), []string{"diskcheck-client"}, io.Discard, io.Discard, &files{})
	require.ErrorContains(t, err, "needs -addr and -file")
}

// tiny runs the command on a small file in a fresh directory and returns
// its output; the directory must be empty afterwards.
func tiny(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	fl := &files{}
	// In one process: a child per run costs a process start each, which
	// the presets' dozens of runs would multiply (TestIsolated covers it).
	// Two rounds of 30 ms each, no warm-up: every code path, little time.
	err := run(context.Background(), append([]string{"-dir", dir, "-size", "8M", "-duration", "60ms", "-rounds", "2", "-warmup", "0", "-isolate=false"}, args...), &out, &errb, fl)
	fl.removeAll()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
	return out.String(), errb.String(), err
}

func decode(t *testing.T, out string) Report {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var rep Report
	require.NoError(t, dec.Decode(&rep), out)
	return rep
}

// Every preset runs at a tiny size, and every run of it measures
// something, except the ones this machine may refuse (IOPOLL needs poll
// queues).
func TestPresets(t *testing.T) {
	testenv.SkipIfRefused(t, "uring", "the presets' io_uring and Linux AIO rows")
	for _, p := range presetNames {
		t.Run(p, func(t *testing.T) {
			args := []string{"-preset", p, "-json"}
			rounds := 2
			switch p {
			case "slowdisk":
				t.Skip("a disk of its own: TestSlowdisk")
			case "overhead":
				t.Skip("devices of its own: TestOverhead")
			case "default":
			case "dropin": // a hundredth of the work: every row, one round
				args = append(args, "-rounds", "1", "-scale", "0.01")
				rounds = 1
			case "wal", "glommio":
				// Their rows are custom measurements (custom.go):
				// two rounds show they get the statistics too.
				args = append(args, "-fio")
				if p == "wal" { // one record size of five: fio starts in 0.3 s
					args = append(args, "-bs", "4k")
				}
			default: // the rounds are the same code for every preset; one keeps the test short
				args = append(args, "-rounds", "1")
				rounds = 1
			}
			out, stderr, err := tiny(t, args...)
			require.NoError(t, err, stderr)
			rep := decode(t, out)
			require.Equal(t, p, rep.Preset)
			require.NotEmpty(t, rep.Results)
			for _, r := range rep.Results {
				if r.Error != "" {
					if r.Backend == "fio" && strings.Contains(r.Error, "not installed") {
						continue // the glommio preset's fio rows
					}
					require.Contains(t, r.Label, "IOPOLL", "%s/%s failed: %s", r.Group, r.Label, r.Error)
					continue
				}
				require.Positive(t, r.Ops, "%s/%s", r.Group, r.Label)
				require.Positive(t, r.IOPS)
				if p == "wal" && r.Backend == "fio" {
					require.False(t, r.Direct, "wal: fio's psync writes are buffered")
				}
				require.Len(t, r.Rounds, rounds, "%s/%s", r.Group, r.Label)
				if r.Backend == "fio" {
					// fio's own process: no threads or system calls
					// counted, and its percentiles are bucketed (p99
					// may exceed the exact max).
					continue
				}
				require.Positive(t, r.Lat.Max)
				require.LessOrEqual(t, r.Lat.P50, r.Lat.P99)
				require.LessOrEqual(t, r.Lat.P99, r.Lat.Max)
				require.Positive(t, r.ThreadsPeak)
				if p != "dropin" { // its count is of read and write calls: io_uring's are not
					require.Positive(t, r.SyscallsPerOp, "%s/%s", r.Group, r.Label)
				}
			}
			if _, err := exec.LookPath("fio"); err != nil && p == "glommio" {
				t.Skip("fio is not installed (apt-get install -y fio): the glommio preset's rows ran, but their ratios are to fio")
			}
			if p == "wal" || p == "glommio" {
				// fio has no group commit (its jobs would not share one log).
				requireCompared(t, rep.Results, func(r Result) bool { return p == "glommio" || r.Goroutines == 1 })
			}
			if p == "dropin" {
				requireDropIn(t, rep.DropIn, len(dropinSpecs), 1)
			}
			if p == "latency-model" {
				require.NotNil(t, rep.Model)
				require.Positive(t, rep.Model.BufferSize)
				require.Positive(t, rep.Model.Depth)
			}
			if p == "paper" {
				var submit bool
				for _, r := range rep.Results {
					submit = submit || r.SubmitUsPerOp > 0
				}
				require.True(t, submit, "no submit time measured")
			}
		})
	}
}

// requireCompared checks that every row of a custom preset was compared:
// each set has a baseline, every other row a ratio to it with its rounds'
// test and bounds, and (fio installed) a fio row where wantFio says so.
func requireCompared(t *testing.T, rs []Result, wantFio func(Result) bool) {
	t.Helper()
	_, noFio := exec.LookPath("fio")
	sets := map[string][]Result{}
	for _, r := range rs {
		sets[groupKey(r)] = append(sets[groupKey(r)], r)
	}
	for key, set := range sets {
		var fio, base bool
		for _, r := range set {
			fio = fio || r.Backend == "fio"
			if r.Error != "" {
				continue
			}
			require.Positive(t, r.Ratio, "%s/%s: no ratio", r.Group, r.Label)
			require.Positive(t, r.Spread.IOPS.Confidence, "%s/%s", r.Group, r.Label)
			if r.Ratio == 1 && (r.Base || r.Backend == "os.File") {
				base = true
				continue
			}
			require.Positive(t, r.RatioP, "%s/%s: no test", r.Group, r.Label)
			require.Positive(t, r.RatioHi, "%s/%s: no bounds", r.Group, r.Label)
		}
		require.True(t, base, "%q: no baseline", key)
		if noFio == nil && wantFio(set[0]) {
			require.True(t, fio, "%q: no fio row", key)
		}
	}
}

// requireDropIn checks the dropin table: every row has the three sides
// measured, the ratios to os with their rounds, threads, and a verdict.
func requireDropIn(t *testing.T, sum *DropInSummary, rows, rounds int) {
	t.Helper()
	require.NotNil(t, sum)
	require.Len(t, sum.Rows, rows)
	require.Equal(t, rounds, sum.Rounds)
	require.Equal(t, sum.GOMAXPROCS+4+sum.WorkerCap, sum.ThreadBound)
	for _, r := range sum.Rows {
		require.NotEmpty(t, r.OK, r.Key)
		require.Contains(t, []string{"ops/s", "MB/s"}, r.Unit)
		for side, c := range map[string]DropInCell{"os": r.OS, "diskio": r.DiskIO, "direct": r.Direct} {
			require.Empty(t, c.Error, "%s/%s", r.Key, side)
			require.Positive(t, c.Value, "%s/%s", r.Key, side)
			require.Positive(t, c.Threads, "%s/%s", r.Key, side)
			require.Positive(t, c.Ratio, "%s/%s", r.Key, side)
			require.LessOrEqual(t, c.RatioMin, c.Ratio, "%s/%s", r.Key, side)
			require.GreaterOrEqual(t, c.RatioMax, c.Ratio, "%s/%s", r.Key, side)
		}
		require.Equal(t, 1.0, r.OS.Ratio, r.Key)
		if r.OK != "ok" {
			require.Regexp(t, `^(LOW|ROUND|THREADS)`, r.OK, r.Key)
		}
	}
}

// The dropin preset's text output: the table aligned and as markdown,
// the rows -workloads selects in the table's order; names it does not
// know fail before anything is written.
func TestDropIn(t *testing.T) {
	out, stderr, err := tiny(t, "-preset", "dropin", "-rounds", "2", "-scale", "0.01", "-workloads", "small-read,hot-read-1,copy-file,many-files-64")
	require.NoError(t, err, stderr)
	hot := strings.Index(out, "hot 4 KiB random reads (8 MiB in the page cache), 1 goroutine ")
	small := strings.Index(out, "the 20 files (in the page cache): open, io.ReadAll, close")
	copyRow := strings.Index(out, "io.Copy file to a new file, 5240 KiB, cold source")
	many := strings.Index(out, "64 goroutines, each 4 KiB appends (O_APPEND) + Sync to its own new file, 164 commits")
	require.True(t, hot >= 0 && many > hot && small > many && copyRow > small, out)
	require.NotContains(t, out, "cold 4 KiB random reads")
	require.Contains(t, out, "thread bound GOMAXPROCS+4+")
	require.Contains(t, out, "median of 2 alternating rounds")
	require.Contains(t, out, "| workload | unit | os.File | diskio |")
	require.Contains(t, out, "|---|---:|")
	require.Regexp(t, `\| hot [^|]+, 1 goroutine \| ops/s \| [0-9,.]+ \| [0-9,.]+ \| [0-9.]+x \([0-9.]+-[0-9.]+\) \|`, out)

	var list bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-preset", "dropin", "-workloads", "list"}, &list, io.Discard, &files{}))
	require.Contains(t, list.String(), "cold-read (cold-read-1, cold-read-16, cold-read-256)\n")
	require.Contains(t, list.String(), "many-files (many-files-64, many-files-256, many-files-1024)\n")
	require.Len(t, strings.Split(strings.TrimSpace(list.String()), "\n"), 13)

	_, _, err = tiny(t, "-preset", "dropin", "-workloads", "cold-read,small")
	require.ErrorContains(t, err, `-workloads: unknown "small"`)
	_, _, err = tiny(t, "-preset", "fsync", "-workloads", "cold-read")
	require.ErrorContains(t, err, "-workloads and -scale are for -preset dropin")
	_, _, err = tiny(t, "-preset", "dropin", "-scale", "0")
	require.ErrorContains(t, err, "bad -scale")
}

// -seccomp: the children that measure refuse io_uring (and AIO) with a
// real filter, and the diskio rows say what the scheduler runs on; this
// process stays as it was.
func TestDropInSeccomp(t *testing.T) {
	for _, c := range testenv.Refusals {
		t.Run(c.Refused.String(), func(t *testing.T) {
			if testenv.Refused()&^c.Refused != 0 {
				t.Skipf("this process refuses %s already", testenv.Refused())
			}
			out, stderr, err := tiny(t, "-isolate=true", "-preset", "dropin", "-rounds", "1", "-scale", "0.01", "-workloads", "hot-read-1", "-seccomp", c.Refused.String())
			require.NoError(t, err, stderr)
			require.Contains(t, out, "note: -seccomp "+c.Refused.String()+": the processes that measure refuse io_uring_setup, ")
			require.Contains(t, out, "note (diskio, direct): scheduler on "+c.Backend+" (")
			for _, r := range c.Reasons {
				require.Contains(t, out, r)
			}
			require.NotContains(t, out, "error")
		})
	}
	_, _, err := tiny(t, "-preset", "fsync", "-seccomp", "uring")
	require.ErrorContains(t, err, "-seccomp is for -preset dropin")
	_, _, err = tiny(t, "-preset", "dropin", "-seccomp", "epoll")
	require.ErrorContains(t, err, `unknown system-call family "epoll"`)
}

// The -json output of a real run decodes into the documented struct with
// the fields result.go documents.
func TestJSONDecodes(t *testing.T) {
	testenv.SkipIfRefused(t, "uring", "its uring rows")
	out, stderr, err := tiny(t, "-json", "-rw", "randread,randwrite", "-goroutines", "1,4", "-backends", "uring,os.File")
	require.NoError(t, err, stderr)
	rep := decode(t, out)
	require.Equal(t, "custom", rep.Preset)
	require.Equal(t, int64(8<<20), rep.FileSize)
	require.Len(t, rep.Results, 8)
	var raw struct {
		Results []map[string]any `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, key := range []string{"backend", "workload", "goroutines", "block_size", "iops", "mb_per_s", "lat_us", "cpu_us_per_op", "os_threads_peak"} {
		require.Contains(t, raw.Results[0], key)
	}
	lat := raw.Results[0]["lat_us"].(map[string]any)
	for _, key := range []string{"p50", "p99", "max"} {
		require.Contains(t, lat, key)
	}
	for _, r := range rep.Results {
		require.Empty(t, r.Error)
		require.Equal(t, 4096, r.BlockSize)
		require.InDelta(t, r.IOPS*4096/1e6, r.MBPerS, r.MBPerS*1e-9)
		if r.Backend == "os.File" {
			require.Equal(t, 1.0, r.Ratio)
			require.Equal(t, 1.0, r.SyscallsPerOp)
		}
	}
}

func TestTableAndPlot(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "p")
	out, stderr, err := tiny(t, "-rw", "randread,read", "-goroutines", "1,2", "-backends", "uring,os.File", "-plot", prefix+".svg")
	require.NoError(t, err, stderr)
	require.Contains(t, out, "randread 4 KiB")
	require.Contains(t, out, "p99.9")
	require.Contains(t, out, "fits in RAM")
	require.Contains(t, out, "median of 2 alternating rounds")
	require.Empty(t, stderr, "no progress bar when stderr is not a terminal")
	for name, want := range map[string]string{"throughput": "randread 4 KiB", "tail": "fraction slower", "scaling": "OS threads"} {
		b, err := os.ReadFile(prefix + "-" + name + ".svg")
		require.NoError(t, err)
		dec := xml.NewDecoder(bytes.NewReader(b))
		var elems int
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			if _, ok := tok.(xml.StartElement); ok {
				elems++
			}
		}
		require.Greater(t, elems, 20, name)
		require.Contains(t, string(b), want, name)
		f, err := os.Open(prefix + "-" + name + ".png")
		require.NoError(t, err)
		img, err := png.Decode(f)
		f.Close()
		require.NoError(t, err, name)
		require.Greater(t, img.Bounds().Dx(), 500, name)
	}
}

// -json carries every round and the spread: the rows of a set run in a
// rotated order each round, every row has one Round per round, and its
// figures are the medians inside their intervals.
func TestRoundsJSON(t *testing.T) {
	testenv.SkipIfRefused(t, "uring", "its uring rows")
	out, stderr, err := tiny(t, "-json", "-rounds", "3", "-goroutines", "2", "-backends", "uring,aio,os.File")
	require.NoError(t, err, stderr)
	rep := decode(t, out)
	require.Equal(t, 3, rep.Rounds)
	require.Len(t, rep.Results, 3)
	for i, r := range rep.Results {
		require.Empty(t, r.Error)
		require.Len(t, r.Rounds, 3, r.Label)
		var orders []int
		var ops int64
		for _, rd := range r.Rounds {
			require.Positive(t, rd.IOPS)
			require.Positive(t, rd.Lat.P50)
			orders = append(orders, rd.Order)
			ops += rd.Ops
		}
		// Row i of a set of 3 runs at position (i - round) mod 3.
		require.Equal(t, []int{i, (i + 2) % 3, (i + 1) % 3}, orders, r.Label)
		require.Equal(t, ops, r.Ops)
		for name, iv := range map[string]struct {
			iv Interval
			v  float64
		}{"iops": {r.Spread.IOPS, r.IOPS}, "p50": {r.Spread.P50, r.Lat.P50}, "p99": {r.Spread.P99, r.Lat.P99}, "mb/s": {r.Spread.MBPerS, r.MBPerS}} {
			require.Equal(t, 0.75, iv.iv.Confidence, name)
			require.LessOrEqual(t, iv.iv.Lo, iv.v, name)
			require.GreaterOrEqual(t, iv.iv.Hi, iv.v, name)
		}
		if r.Backend == "os.File" {
			require.Equal(t, 1.0, r.Ratio)
			require.Zero(t, r.RatioP)
		} else {
			require.Positive(t, r.RatioP, r.Label)
			require.False(t, r.RatioSignificant, "3+3 rounds cannot reach p < 0.05")
			require.LessOrEqual(t, r.RatioLo, r.Ratio)
			require.GreaterOrEqual(t, r.RatioHi, r.Ratio)
		}
	}
	var raw struct {
		Results []map[string]any `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, key := range []string{"rounds", "spread", "ratio_p"} {
		require.Contains(t, raw.Results[0], key)
	}
}

func TestFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio not installed")
	}
	out, stderr, err := tiny(t, "-json", "-fio", "-goroutines", "8", "-backends", "uring")
	require.NoError(t, err, stderr)
	rep := decode(t, out)
	require.Len(t, rep.Results, 2)
	f := rep.Results[1]
	require.Equal(t, "fio", f.Backend)
	require.Empty(t, f.Error)
	require.Positive(t, f.IOPS)
	require.Positive(t, f.Lat.P99)
	require.Positive(t, f.Ops)
	require.GreaterOrEqual(t, f.CPUUsPerOp, 0.0)
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"-rw randwalk", `unknown -rw value "randwalk"`},
		{"-preset nope", `unknown -preset "nope"`},
		{"-backends uring,io_uring", `unknown -backends value "io_uring"`},
		{"-fsync sometimes", `unknown -fsync value "sometimes"`},
		{"-size 12q", `bad -size "12q"`},
		{"-bs 4k,0", `bad -bs`},
		{"-goroutines 0", `bad -goroutines`},
		{"-rounds 0", `bad -rounds 0`},
		{"-warmup -1s", `bad -warmup`},
		{"-mix 101 -rw mixed", `bad -mix 101`},
		{"extra", `unexpected argument "extra"`},
	} {
		_, _, err := tiny(t, strings.Fields(c.args)...)
		require.ErrorContains(t, err, c.want, c.args)
	}
	err := checkSpace(t.TempDir(), 1<<62)
	require.ErrorContains(t, err, "not enough free space")
	_, _, err = tiny(t, "-size", "4000000G")
	require.ErrorContains(t, err, "not enough free space")
}

// By default each run happens in a child process, and its result (with
// its latency histogram) comes back intact.
func TestIsolated(t *testing.T) {
	testenv.SkipIfRefused(t, "uring", "its uring row")
	out, _, err := tiny(t, "-isolate=true", "-json", "-backends", "uring,os.File", "-rw", "randread", "-goroutines", "4")
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Results, 2)
	for _, r := range rep.Results {
		require.Empty(t, r.Error)
		require.Positive(t, r.IOPS, r.Label)
		require.Positive(t, r.Lat.P50, r.Label)
		require.Positive(t, r.ThreadsPeak, r.Label)
	}
}

// A custom measurement runs in a child process too: the Job names it and
// carries its parameters.
func TestCustomIsolated(t *testing.T) {
	dir := t.TempDir()
	e := &env{dir: dir, size: 8 << 20, direct: true, fl: &files{}}
	j := Job{Group: "wal", Label: "diskio Datasync", Backend: "diskio", RW: "append", BS: 4096, G: 1, Direct: true,
		Fsync: "each", Limit: 1 << 20, Custom: "wal", Variant: "preallocated", Dir: dir, Duration: 50 * time.Millisecond}
	r, _ := e.runIsolated(context.Background(), j)
	require.Empty(t, r.Error)
	require.Positive(t, r.Ops)
	require.Positive(t, r.Lat.P50)
	require.Positive(t, r.ThreadsPeak)
	j.Custom = "nope"
	r, _ = e.runIsolated(context.Background(), j)
	require.Contains(t, r.Error, `unknown custom measurement "nope"`)
}

// -trace PREFIX writes the tracer's files for the diskio runs.
func TestTrace(t *testing.T) {
	testenv.SkipIfRefused(t, "uring", "its uring rows")
	prefix := filepath.Join(t.TempDir(), "run")
	_, _, err := tiny(t, "-backends", "uring", "-rw", "randread", "-goroutines", "4", "-trace", prefix)
	require.NoError(t, err)
	sum, err := os.ReadFile(prefix + ".txt")
	require.NoError(t, err)
	require.Contains(t, string(sum), "read  4KiB")
	for _, suffix := range []string{".wait.pb.gz", ".syscalls.pb.gz", ".trace.json", ".jsonl"} {
		fi, err := os.Stat(prefix + suffix)
		require.NoError(t, err)
		require.Positive(t, fi.Size(), suffix)
	}
}

// A canceled run (Ctrl-C) stops promptly; the caller removes the files.
func TestCancel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	fl := &files{}
	time.AfterFunc(300*time.Millisecond, cancel)
	t0 := time.Now()
	err := run(ctx, []string{"-dir", dir, "-size", "8M", "-duration", "20s"}, io.Discard, io.Discard, fl)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(t0), 10*time.Second)
	require.NotEmpty(t, fl.removeAll())
	ents, _ := os.ReadDir(dir)
	require.Empty(t, ents)
}

func TestGroupCommit(t *testing.T) {
	var started, finished atomic.Int64
	c := &groupCommit{sync: func() error {
		started.Add(1)
		time.Sleep(200 * time.Microsecond)
		finished.Add(1)
		return nil
	}}
	var wg sync.WaitGroup
	const writers, rounds = 16, 50
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				// A sync that started after this point must
				// have finished when wait returns.
				before := started.Load()
				require.NoError(t, c.wait())
				require.Greater(t, finished.Load(), before)
			}
		}()
	}
	wg.Wait()
	require.Less(t, started.Load(), int64(writers*rounds), "no sharing")
	boom := errors.New("boom")
	c = &groupCommit{sync: func() error { return boom }}
	require.ErrorIs(t, c.wait(), boom)
}

func TestFitLine(t *testing.T) {
	var pts []fitPoint
	for n := 512.0; n <= 1<<20; n *= 2 {
		pts = append(pts, fitPoint{n, 207 + 0.0052*n})
	}
	a, b, r2 := fitLine(pts)
	require.InDelta(t, 207, a, 1e-6)
	require.InDelta(t, 0.0052, b, 1e-9)
	require.InDelta(t, 1, r2, 1e-9)
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int{"4096": 4096, "4k": 4096, "512K": 512 << 10, "1M": 1 << 20, "2G": 2 << 30, "100B": 100} {
		got, err := parseSize(in)
		require.NoError(t, err)
		require.Equal(t, want, got, in)
	}
	require.Equal(t, "4 KiB", sizeName(4096))
	require.Equal(t, "1000 B", sizeName(1000))
	require.Equal(t, "1,234,567", commas(1234567))
}

// The testbench and the library link no cgo. A binary with cgo starts the
// runtime's template thread at init, one OS thread more in every run's
// count; package net links cgo (its resolver) wherever a C compiler is
// installed, so neither may import it. (Test binaries do, through
// testify: their thread counts include that thread.)
func TestNoCgo(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies:", err)
	}
	for _, pkg := range []string{".", "github.com/diskio-go/diskio"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, dep := range strings.Fields(string(out)) {
			require.NotContains(t, []string{"runtime/cgo", "net"}, dep, "%s imports %s", pkg, dep)
		}
	}
}
