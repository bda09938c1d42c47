//go:build linux

package pebblevfs

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/metamorphic"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Pebble's metamorphic test (github.com/cockroachdb/pebble/v2/metamorphic,
// unchanged) on the adapter. RunAndCompare generates one random sequence
// of operations, runs it under Pebble's standard and random OPTIONS, each
// in a child process (this test binary again, with -run-dir), and diffs
// every run's history against the first one's, standard-000: Pebble's
// defaults on its in-memory FS. Every other run is moved onto the adapter
// in its child: use_disk=true in its OPTIONS (strictfs dropped: it needs
// Pebble's MemFS, to simulate crashes at restarts) and vfs.Default, which
// use_disk runs use, replaced by the adapter. The child also checks, from
// /proc/self/fdinfo, that each table, blob file and WAL the adapter opened
// has O_DIRECT set or not as its variant says.
//
// Environment (the parent's; the children get theirs from it):
//
//	PEBBLEVFS_META_DURATION  run seeds one after another for this long per
//	                         variant (e.g. 30m); unset: one seed each
//	PEBBLEVFS_META_VARIANTS  variants, comma-separated (default
//	                         direct,buffered; also direct-waldirect,
//	                         direct-nofresh, and mem: every run on
//	                         Pebble's own FSs, the harness's control)
//	PEBBLEVFS_META_SEED      the first seed (default: the time)
//	PEBBLEVFS_META_OPS       operations per seed, MIN-MAX (default 300-600
//	                         in one-seed runs, 1000-3000 with a duration)
//	PEBBLEVFS_META_ERROR_RATE  rate of errors Pebble's errorfs injects into
//	                         the reads of each run's FS (Pebble v2.1.7's
//	                         harness does not retry them, so runs fail or
//	                         differ on its own FSs too; compare with mem)
//	PEBBLEVFS_META_KEEP_GOING  go on to the next seed after a seed whose
//	                         runs failed (a divergence still ends the test)
//	PEBBLEVFS_META_DIR       where the runs' databases go (default a
//	                         temporary directory; must allow O_DIRECT)
//	PEBBLEVFS_META_LOG       a file the summary of each seed is appended to
//
// Flags the children get from RunAndCompare; the names are the ones
// Pebble's own metamorphic test binary defines.
var (
	metaRunDir    = flag.String("run-dir", "", "metamorphic: the run directory of one child run")
	metaKeep      = flag.Bool("keep", false, "metamorphic: keep the databases")
	metaOpTimeout = flag.Duration("op-timeout", 2*time.Minute, "metamorphic: per-operation timeout")
	metaKeyFormat = flag.String("key-format", "testkeys", "metamorphic: the key format")
)

// The environment a parent sets for its children.
const (
	metaEnvVariant   = "PEBBLEVFS_META_CHILD_VARIANT"
	metaEnvReport    = "PEBBLEVFS_META_CHILD_REPORT"
	metaEnvErrorRate = "PEBBLEVFS_META_CHILD_ERROR_RATE"
	metaReference    = "standard-000" // the run every history is diffed against
)

// metaVariant is how a child's adapter is configured.
type metaVariant struct {
	name string
	mode Mode
	// walDirect: WALs O_DIRECT too (FS.WALDirect); noFresh: no fresh cache.
	walDirect, noFresh bool
	// mem: no adapter at all, every run as Pebble generated it (the
	// control for what the harness itself does, e.g. with injected errors).
	mem bool
}

func parseVariant(s string) (metaVariant, error) {
	v := metaVariant{name: s}
	if s == "mem" {
		v.mem = true
		return v, nil
	}
	base, rest, _ := strings.Cut(s, "-")
	m, err := ParseMode(base)
	if err != nil {
		return v, err
	}
	v.mode = m
	for _, suf := range strings.Split(rest, "-") {
		switch {
		case suf == "":
		case suf == "waldirect" && m == Direct:
			v.walDirect = true
		case suf == "nofresh" && m == Direct:
			v.noFresh = true
		default:
			return v, fmt.Errorf("unknown variant %q", s)
		}
	}
	return v, nil
}

func (v metaVariant) fs() *FS {
	fs := NewMode(v.mode).(*FS)
	fs.WALDirect = v.walDirect
	if v.noFresh {
		fs.FreshBytes = -1
	}
	return fs
}

// wantDirect says whether the variant opens a file of kind k O_DIRECT.
func (v metaVariant) wantDirect(k kind) bool {
	if v.mode == Buffered {
		return false
	}
	return k == data || v.walDirect
}

// uniform is a metamorphic operation count drawn uniformly in [lo, hi]
// (metamorphic.OpCount's random variable).
type uniform struct{ lo, hi uint64 }

func (u uniform) Uint64(rng *rand.Rand) uint64 { return u.lo + rng.Uint64N(u.hi-u.lo+1) }

// metaReport is what a child run tells its parent.
type metaReport struct {
	Run       string         `json:"run"`
	Variant   string         `json:"variant"`
	Ops       int            `json:"ops"`
	Opened    map[string]int `json:"opened"`  // "sst direct": files of that kind opened with that flag
	Removed   int            `json:"removed"` // Remove calls through the adapter
	Wrong     []string       `json:"wrong"`   // files opened against the variant
	Seconds   float64        `json:"seconds"` // the run's duration
	Latency   bool           `json:"latency"` // errorfs injects latency around the FS
	OnAdapter bool           `json:"adapter"` // false only for the reference
}

func TestMetamorphic(t *testing.T) {
	if *metaRunDir != "" {
		metamorphicChild(t, *metaRunDir)
		return
	}
	variants := []string{"direct", "buffered"}
	if s := os.Getenv("PEBBLEVFS_META_VARIANTS"); s != "" {
		variants = strings.Split(s, ",")
	}
	var duration time.Duration
	if s := os.Getenv("PEBBLEVFS_META_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, "PEBBLEVFS_META_DURATION")
		duration = d
	}
	ops := uniform{300, 600}
	if duration > 0 {
		// Pebble's own default is 5,000-10,000 (1,000-2,000 in race
		// builds). On disk, the runs that make many tiny files (1-byte
		// blocks, 12-byte target file sizes) take far longer than in
		// memory as the count grows, and more seeds try more random
		// OPTIONS.
		ops = uniform{1000, 3000}
	}
	if s := os.Getenv("PEBBLEVFS_META_OPS"); s != "" {
		lo, hi, ok := strings.Cut(s, "-")
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := strconv.ParseUint(hi, 10, 64)
		require.True(t, ok && err1 == nil && err2 == nil && a <= b, "PEBBLEVFS_META_OPS=%q: want MIN-MAX", s)
		ops = uniform{a, b}
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PEBBLEVFS_META_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "PEBBLEVFS_META_SEED")
		seed = v
	}
	errorRate := os.Getenv("PEBBLEVFS_META_ERROR_RATE")
	keepGoing := os.Getenv("PEBBLEVFS_META_KEEP_GOING") != ""
	root := os.Getenv("PEBBLEVFS_META_DIR")
	if root == "" {
		root = t.TempDir()
	}
	if !directHere(t) {
		t.Skip("the test directory does not take O_DIRECT")
	}
	for _, name := range variants {
		v, err := parseVariant(name)
		require.NoError(t, err)
		t.Run(v.name, func(t *testing.T) {
			// Children inherit the environment (RunAndCompare's exec.Command
			// leaves Env nil); the subtests below run one at a time.
			setenv(t, metaEnvVariant, v.name)
			setenv(t, metaEnvErrorRate, errorRate)
			start := time.Now()
			for i := 0; ; i++ {
				s := seed + uint64(i)
				ok := t.Run(strconv.FormatUint(s, 10), func(t *testing.T) {
					metamorphicSeed(t, root, v, s, ops)
				})
				if (!ok && !keepGoing) || time.Since(start) >= duration {
					break
				}
			}
		})
	}
}

// setenv sets k to v for the rest of the test (t.Setenv refuses tests
// whose subtests call t.Parallel, as RunAndCompare's do).
func setenv(t *testing.T, k, v string) {
	old, had := os.LookupEnv(k)
	require.NoError(t, os.Setenv(k, v))
	t.Cleanup(func() {
		if had {
			os.Setenv(k, old)
		} else {
			os.Unsetenv(k)
		}
	})
}

// metamorphicSeed runs and compares one seed's operations under every
// OPTIONS of RunAndCompare, and checks what the children reported.
func metamorphicSeed(t *testing.T, root string, v metaVariant, seed uint64, ops uniform) {
	report := filepath.Join(t.TempDir(), "report")
	setenv(t, metaEnvReport, report)
	start := time.Now()
	metamorphic.RunAndCompare(t, filepath.Join(root, v.name),
		metamorphic.Seed(seed),
		metamorphic.OpCount(ops),
		metamorphic.OpTimeout(*metaOpTimeout),
		metamorphic.MaxThreads(math.MaxInt),
		metamorphic.TestkeysKeyFormat,
	)
	if t.Failed() {
		return
	}
	elapsed := time.Since(start)

	reported, err := os.ReadFile(report)
	require.NoError(t, err, "no child reported")
	var runs []metaReport
	for _, line := range strings.Split(strings.TrimSpace(string(reported)), "\n") {
		var r metaReport
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		runs = append(runs, r)
	}
	opened := map[string]int{}
	adapter, removed, nops, latency := 0, 0, 0, 0
	for _, r := range runs {
		if r.Latency && r.OnAdapter {
			latency++
		}
		require.Empty(t, r.Wrong, "run %s opened files against variant %s", r.Run, v.name)
		require.Equal(t, v.name, r.Variant)
		nops = r.Ops
		if !r.OnAdapter {
			if !v.mem {
				require.Equal(t, metaReference, r.Run)
			}
			continue
		}
		adapter++
		removed += r.Removed
		for k, n := range r.Opened {
			opened[k] += n
		}
	}
	if !v.mem {
		require.Equal(t, len(runs)-1, adapter, "every run but the reference is on the adapter")
		// Every run opens a WAL unless its OPTIONS disable it, and some flush.
		wantSST, wantLog := "sst buffered", "log buffered"
		if v.wantDirect(data) {
			wantSST = "sst direct"
		}
		if v.wantDirect(wal) {
			wantLog = "log direct"
		}
		require.Positive(t, opened[wantSST], "tables opened as %s", v.name)
		require.Positive(t, opened[wantLog], "WALs opened as %s", v.name)
	}
	keys := make([]string, 0, len(opened))
	for k := range opened {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var files strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&files, " %s=%d", k, opened[k])
	}
	line := fmt.Sprintf("%s variant=%s seed=%d ops=%d runs=%d adapter=%d (errorfs latency in %d) removed=%d%s elapsed=%.1fs: histories equal",
		time.Now().UTC().Format(time.RFC3339), v.name, seed, nops, len(runs), adapter, latency, removed, files.String(), elapsed.Seconds())
	t.Log(line)
	if p := os.Getenv("PEBBLEVFS_META_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		require.NoError(t, err)
		fmt.Fprintln(f, line)
		require.NoError(t, f.Close())
	}
}

// metamorphicChild is one run of RunAndCompare, in a child process.
func metamorphicChild(t *testing.T, runDir string) {
	start := time.Now()
	v, err := parseVariant(os.Getenv(metaEnvVariant))
	require.NoError(t, err, "%s", metaEnvVariant)
	rep := metaReport{Run: filepath.Base(runDir), Variant: v.name, Opened: map[string]int{}}
	rep.Ops = countOps(t, filepath.Join(filepath.Dir(filepath.Clean(runDir)), "ops"))

	var check *fdCheckFS
	optionsPath := filepath.Join(runDir, "OPTIONS")
	b, err := os.ReadFile(optionsPath)
	require.NoError(t, err)
	rep.Latency = strings.Contains(string(b), "io_latency_probability=")
	if rep.Run != metaReference && !v.mem {
		rep.OnAdapter = true
		require.NoError(t, os.WriteFile(optionsPath, []byte(onDisk(string(b))), 0o644))
		check = &fdCheckFS{FS: v.fs(), v: v, opened: rep.Opened}
		// use_disk runs take vfs.Default when they parse their OPTIONS;
		// the adapter took the OS's for its own files.
		vfs.Default = check
	}

	opts := []metamorphic.RunOnceOption{
		metamorphic.MaxThreads(math.MaxInt),
		metamorphic.OpTimeout(*metaOpTimeout),
	}
	switch *metaKeyFormat {
	case "testkeys":
		opts = append(opts, metamorphic.TestkeysKeyFormat)
	case "cockroachkvs":
		opts = append(opts, metamorphic.CockroachKeyFormat)
	default:
		t.Fatalf("unknown key format %q", *metaKeyFormat)
	}
	if *metaKeep {
		opts = append(opts, metamorphic.KeepData{})
	}
	if s := os.Getenv(metaEnvErrorRate); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, "%s", metaEnvErrorRate)
		opts = append(opts, metamorphic.InjectErrorsRate(r))
	}
	// The seed is only printed by RunOnce.
	metamorphic.RunOnce(t, runDir, 0, filepath.Join(runDir, "history"), opts...)

	if check != nil {
		check.mu.Lock()
		rep.Removed, rep.Wrong = check.removed, check.wrong
		check.mu.Unlock()
	}
	rep.Seconds = time.Since(start).Seconds()
	b, err = json.Marshal(rep)
	require.NoError(t, err)
	// One line in one write to an O_APPEND file: children run in parallel.
	f, err := os.OpenFile(os.Getenv(metaEnvReport), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.Write(append(b, '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Empty(t, rep.Wrong, "files opened against variant %s", v.name)
}

// countOps counts the operations in a metamorphic ops file (one a line).
func countOps(t *testing.T, path string) int {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			n++
		}
	}
	require.NoError(t, sc.Err())
	return n
}

// onDisk rewrites a metamorphic OPTIONS file to run on vfs.Default:
// use_disk=true in [TestOptions], strictfs (an in-memory FS that simulates
// crashes at restarts) dropped; a use_disk run's restarts are no-ops.
func onDisk(options string) string {
	var out []string
	inTest, added := false, false
	for _, line := range strings.Split(options, "\n") {
		s := strings.TrimSpace(line)
		if strings.HasPrefix(s, "[") {
			inTest = s == "[TestOptions]"
		}
		if inTest && (s == "strictfs=true" || s == "use_disk=true") {
			continue
		}
		out = append(out, line)
		if inTest && !added {
			out = append(out, "  use_disk=true")
			added = true
		}
	}
	if !added {
		out = append(out, "[TestOptions]", "  use_disk=true", "")
	}
	return strings.Join(out, "\n")
}

// fdCheckFS is the adapter, checking that every file it opens for Pebble
// has O_DIRECT as the variant says (the flags of the descriptor, from
// /proc/self/fdinfo), and counting them and the removals.
type fdCheckFS struct {
	*FS
	v metaVariant

	mu      sync.Mutex
	opened  map[string]int
	removed int
	wrong   []string
}

// Unwrap returns nil, as the adapter's does: vfs.Root of the test's FS is
// then vfs.Default, which tells the harness its data is on disk.
func (c *fdCheckFS) Unwrap() vfs.FS { return nil }

func (c *fdCheckFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := c.FS.Create(name, cat)
	return f, c.check(name, f, err)
}

func (c *fdCheckFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := c.FS.Open(name, opts...)
	return f, c.check(name, f, err)
}

func (c *fdCheckFS) OpenReadWrite(name string, cat vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := c.FS.OpenReadWrite(name, cat, opts...)
	return f, c.check(name, f, err)
}

func (c *fdCheckFS) ReuseForWrite(oldname, newname string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := c.FS.ReuseForWrite(oldname, newname, cat)
	return f, c.check(newname, f, err)
}

func (c *fdCheckFS) Remove(name string) error {
	err := c.FS.Remove(name)
	if err == nil {
		c.mu.Lock()
		c.removed++
		c.mu.Unlock()
	}
	return err
}

func (c *fdCheckFS) check(name string, f vfs.File, err error) error {
	k := kindOf(name)
	if err != nil || k == other {
		return err
	}
	direct, ferr := fdDirect(f.Fd())
	if ferr != nil {
		return ferr
	}
	ext := strings.TrimPrefix(filepath.Ext(name), ".")
	how := "buffered"
	if direct {
		how = "direct"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opened[ext+" "+how]++
	if direct != c.v.wantDirect(k) {
		c.wrong = append(c.wrong, fmt.Sprintf("%s opened %s", name, how))
	}
	return nil
}

// fdDirect reports whether the file open on descriptor fd is open
// O_DIRECT in this process. File.Fd is the descriptor the File was opened
// with, as os.File's; a direct File does its I/O on a second descriptor of
// the same file, opened O_DIRECT. So this looks at every descriptor of the
// process open on the same inode, and at their flags in /proc/self/fdinfo.
func fdDirect(fd uintptr) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(fd), &st); err != nil {
		return false, fmt.Errorf("fstat %d: %w", fd, err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var o unix.Stat_t
		if unix.Fstat(n, &o) != nil || o.Dev != st.Dev || o.Ino != st.Ino {
			continue // closed since, or another file
		}
		flags, err := fdFlags(n)
		if err != nil {
			continue // closed since
		}
		if flags&unix.O_DIRECT != 0 {
			return true, nil
		}
	}
	return false, nil
}

// fdFlags returns the flags of descriptor fd, from /proc/self/fdinfo.
func fdFlags(fd int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 8, 64)
		}
	}
	return 0, fmt.Errorf("fdinfo %d: no flags", fd)
}
