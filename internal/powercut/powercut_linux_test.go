package powercut

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	if sc := os.Getenv(envScenario); sc != "" {
		runWriter(sc) // never returns
	}
	os.Exit(m.Run())
}

// cutsPerRun is the number of cuts per scenario and mode: 3 by default
// (CI), DISKIO_POWERCUT_CUTS for a long run.
func cutsPerRun(t *testing.T) int {
	s := os.Getenv("DISKIO_POWERCUT_CUTS")
	if s == "" {
		if testing.Short() {
			return 2
		}
		return 3
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "DISKIO_POWERCUT_CUTS")
	require.Positive(t, n, "DISKIO_POWERCUT_CUTS")
	return n
}

// masterSeed is DISKIO_POWERCUT_SEED, or the time: every cut's seed
// derives from it, and it is logged, so that a failing run can be
// replayed.
var masterSeed = sync.OnceValue(func() uint64 {
	if s := os.Getenv("DISKIO_POWERCUT_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err == nil {
			return n
		}
	}
	return uint64(time.Now().UnixNano())
})

// events is what a writer said.
type events struct {
	ready  bool
	direct int // -1: not said
	acks   [][]uint64
	writes [][]uint64
	stats  []uint64 // the last S line
	errs   []string
}

func parseEvents(out []byte) (*events, error) {
	ev := &events{direct: -1}
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if !strings.HasSuffix(line, "\n") {
			break // cut short by the kill: one write(2) per line makes this only an empty tail
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		nums := func() ([]uint64, error) {
			v := make([]uint64, len(f)-1)
			for i, s := range f[1:] {
				n, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("writer said %q", line)
				}
				v[i] = n
			}
			return v, nil
		}
		var err error
		var v []uint64
		switch f[0] {
		case "R":
			ev.ready = true
		case "E":
			ev.errs = append(ev.errs, strings.TrimSpace(line[1:]))
		case "D":
			if v, err = nums(); err == nil {
				ev.direct = int(v[0])
			}
		case "A":
			if v, err = nums(); err == nil {
				ev.acks = append(ev.acks, v)
			}
		case "W":
			if v, err = nums(); err == nil {
				ev.writes = append(ev.writes, v)
			}
		case "S":
			if v, err = nums(); err == nil {
				ev.stats = v
			}
		default:
			err = fmt.Errorf("writer said %q", line)
		}
		if err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// cut is one run of a writer and one power cut.
type cut struct {
	scenario, mode, noSync string
	tear                   bool
	seed                   uint64
}

// cutResult is what one cut gave.
type cutResult struct {
	tally
	ev  *events
	ops Ops
}

// syncWriter is a bytes.Buffer safe for the writer's output goroutine and
// the test.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// run mounts a new filesystem at mnt, starts the writer on it, waits for
// it to be set up, lets it write for a random while, cuts the power,
// kills it, mounts again and checks.
func (c cut) run(t *testing.T, mnt string) cutResult {
	t.Helper()
	rng := rand.New(rand.NewPCG(c.seed, 1))
	f := New()
	if err := f.Mount(mnt); err != nil {
		if errors.Is(err, ErrNoFUSE) {
			t.Skipf("needs FUSE (/dev/fuse, and root or fusermount3 from fuse3): %v", err)
		}
		t.Fatal(err)
	}
	defer f.Unmount()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envScenario+"="+c.scenario, envDir+"="+mnt, envMode+"="+c.mode,
		envNoSync+"="+c.noSync, envSeed+"="+strconv.FormatUint(c.seed, 10),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var stderr syncWriter
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var out syncWriter
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(pipe)
		said := false
		for {
			line, err := br.ReadBytes('\n')
			out.Write(line)
			if !said && bytes.Equal(line, []byte("R\n")) {
				said = true
				close(ready)
			}
			if err != nil {
				io.Copy(io.Discard, br)
				return
			}
		}
	}()
	fail := func(format string, args ...any) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%+v: %s\nwriter's output:\n%s\nits errors:\n%s", c, fmt.Sprintf(format, args...), out.bytes(), stderr.bytes())
	}
	select {
	case <-ready:
	case <-done:
		fail("the writer ended before it was set up")
	case <-time.After(60 * time.Second):
		fail("the writer was not set up in 60s")
	}
	time.Sleep(10*time.Millisecond + time.Duration(rng.IntN(190))*time.Millisecond)
	select {
	case <-done:
		fail("the writer ended before the cut")
	default:
	}
	f.Cut(c.tear, rng)
	cmd.Process.Kill()
	cmd.Wait()
	<-done
	require.NoError(t, f.Unmount())
	require.NoError(t, f.Mount(mnt))
	ev, err := parseEvents(out.bytes())
	require.NoError(t, err)
	tl, err := scenarios[c.scenario].check(mnt, ev)
	if err != nil {
		t.Fatalf("%+v: after the cut: %v\nwriter's errors:\n%s", c, err, stderr.bytes())
	}
	tl.cuts = 1
	return cutResult{tally: tl, ev: ev, ops: f.Ops()}
}

var modes = []string{"pagecache", "direct"}

// powerCut runs a scenario's cuts in both modes: every acknowledged
// operation must be there after each cut; its variant without syncs must
// lose some (noSyncs: the variants, "all" and for renames "dir"); the
// writer's Files must have gone through the scheduler, with O_DIRECT in
// direct mode, and no syncfs (not durable on FUSE).
func powerCut(t *testing.T, scenario string, noSyncs ...string) {
	if len(noSyncs) == 0 {
		noSyncs = []string{"all"}
	}
	cuts := cutsPerRun(t)
	seed := masterSeed()
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			mnt := t.TempDir()
			var sum tally
			var ops Ops
			var stats []uint64
			for i := range cuts {
				c := cut{scenario: scenario, mode: mode, tear: i%2 == 1, seed: seed + uint64(i)}
				r := c.run(t, mnt)
				if r.lost != 0 {
					t.Errorf("cut %+v (DISKIO_POWERCUT_SEED=%d): %d of %d acknowledged operations lost", c, seed, r.lost, r.acked)
				}
				require.NotZero(t, r.acked, "cut %+v: nothing acknowledged before the cut", c)
				wantDirect := 0
				if mode == "direct" {
					wantDirect = 1 // FUSE takes O_DIRECT
				}
				require.Equal(t, wantDirect, r.ev.direct, "cut %+v: File.Direct", c)
				require.NotEmpty(t, r.ev.stats, "cut %+v: no statistics said", c)
				stats = r.ev.stats
				require.NotZero(t, stats[2], "cut %+v: the scheduler counted no sync: the Files were not scheduled", c)
				if mode == "direct" {
					require.NotZero(t, stats[1], "cut %+v: the scheduler counted no write in direct mode", c)
				}
				require.Zero(t, stats[3], "cut %+v: a syncfs, which makes nothing durable on FUSE", c)
				sum.add(r.tally)
				ops = addOps(ops, r.ops)
			}
			t.Logf("powercut %s %s: cuts %d, acknowledged %d, lost %d, torn (detected) %d; seed %d; "+
				"the filesystem saw %d writes, %d fsync, %d fdatasync, %d fsyncdir, %d flush, %d fallocate; "+
				"the last cut's scheduler counted %d reads, %d writes, %d syncs, %d syncfs",
				scenario, mode, sum.cuts, sum.acked, sum.lost, sum.torn, seed,
				ops.Writes, ops.Fsyncs, ops.Datasyncs, ops.Dirsyncs, ops.Flushes, ops.Allocates,
				stats[0], stats[1], stats[2], stats[3])
			for _, ns := range noSyncs {
				var lossy tally
				for i := range max(1, cuts/10) {
					c := cut{scenario: scenario, mode: mode, noSync: ns, seed: seed + 1<<32 + uint64(i)}
					r := c.run(t, mnt)
					require.NotZero(t, r.acked, "cut %+v: nothing acknowledged before the cut", c)
					if r.lost == 0 {
						t.Errorf("cut %+v (DISKIO_POWERCUT_SEED=%d): without syncs (%s) nothing of %d acknowledged was lost: the check cannot fail", c, seed, ns, r.acked)
					}
					lossy.add(r.tally)
				}
				t.Logf("powercut %s %s without syncs (%s): cuts %d, acknowledged %d, lost %d, torn (detected) %d",
					scenario, mode, ns, lossy.cuts, lossy.acked, lossy.lost, lossy.torn)
			}
		})
	}
}

func addOps(a, b Ops) Ops {
	a.Writes += b.Writes
	a.Fsyncs += b.Fsyncs
	a.Datasyncs += b.Datasyncs
	a.Dirsyncs += b.Dirsyncs
	a.Flushes += b.Flushes
	a.Allocates += b.Allocates
	a.Truncates += b.Truncates
	a.Refused += b.Refused
	return a
}

// TestPowerCutWALSync: a log's appends, each acknowledged after Sync.
func TestPowerCutWALSync(t *testing.T) { powerCut(t, "wal-sync") }

// TestPowerCutWALDatasync: a log's appends, each acknowledged after
// Datasync.
func TestPowerCutWALDatasync(t *testing.T) { powerCut(t, "wal-datasync") }

// TestPowerCutWALWriteAtDSync: a log's appends with WriteAtDSync, each
// acknowledged when it returns.
func TestPowerCutWALWriteAtDSync(t *testing.T) { powerCut(t, "wal-writeatdsync") }

// TestPowerCutGroupCommit: 16 goroutines writing one file, each record
// acknowledged after its writer's Sync.
func TestPowerCutGroupCommit(t *testing.T) { powerCut(t, "group-commit") }

// TestPowerCutManyTenants: 64 goroutines, each appending to and syncing a
// file of its own.
func TestPowerCutManyTenants(t *testing.T) { powerCut(t, "many-tenants") }

// TestPowerCutPreallocatedOverwrite: records overwritten in place in a
// preallocated file, each acknowledged after Datasync.
func TestPowerCutPreallocatedOverwrite(t *testing.T) { powerCut(t, "preallocated-table") }

// TestPowerCutRenameSyncDir: each record written to a temporary file,
// synced, renamed into place (and an old one removed), acknowledged after
// SyncDir; without SyncDir the renames must be able to vanish.
func TestPowerCutRenameSyncDir(t *testing.T) { powerCut(t, "rename-syncdir", "all", "dir") }
