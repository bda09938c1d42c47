//go:build linux

package sqlitevfs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestGoSQLite3Suites runs ncruces/go-sqlite3's own tests on this VFS, in
// both modes: SQLite's mptest scripts (multiwrite01, crash01, config01,
// config02; rollback and WAL journals), tests/parallel (readers and
// writers on one database from many connections, and from two processes),
// the WAL-index rollback tests and, in the long run, the WAL stress test
// with 64 writers.
//
// The tests are not in this repository: they are taken at test time from
// the module cache (the go-sqlite3 version go.mod requires), copied into a
// temporary directory, and patched there, each patch checked to apply as
// many times as it should (suitePatches), so that a new upstream version
// fails here instead of silently running SQLite's default VFS. The copy
// builds against this module and the diskio beside it. A file added to
// each test package (suiteVFS) registers the VFS the patched tests name,
// "diskio", in the mode of SQLITEVFS_SUITE_MODE, and records for every
// main database it opens whether the process holds it O_DIRECT; the test
// checks those records against the mode.
//
// By default (CI) the suites run as short as they are meaningful: every
// mptest script, tests/parallel's short runs and its two multi-process
// tests, the WAL-index tests, and the WAL stress test at 64 writers with
// 100 transactions each, one round. SQLITEVFS_SUITES=long runs them as
// upstream's long mode does (tests/parallel at 5,000 operations, the WAL
// stress test unchanged: 64 writers, 2,000 transactions each, three
// rounds); SQLITEVFS_SUITES_MODES chooses the modes (pagecache, direct, or
// stock: SQLite's default VFS under the same name, for comparison;
// stock+80us: the same with every read of a main database 80 µs slower).
// The
// go command must be on PATH and the modules the tests import in the
// module cache or downloadable; without them the test skips, unless
// SQLITEVFS_REQUIRE_SUITES is set (CI), when it fails. SQLITEVFS_SUITES_DIR
// names a directory (not yet there) to build the patched copy in and keep.
func TestGoSQLite3Suites(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping go-sqlite3's suites in short mode")
	}
	long := os.Getenv("SQLITEVFS_SUITES") == "long"
	modes := []string{"pagecache", "direct"}
	if m := os.Getenv("SQLITEVFS_SUITES_MODES"); m != "" {
		modes = strings.Split(m, ",")
	}
	bins := buildSuites(t)

	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			for _, run := range suiteRuns(long) {
				t.Run(run.name, func(t *testing.T) {
					runSuite(t, bins[run.pkg], mode, run)
				})
			}
		})
	}
}

// A suiteRun is one run of a test binary of the copy.
type suiteRun struct {
	name  string
	pkg   string   // the package, as built by buildSuites
	args  []string // -test flags
	env   []string
	tests []string // the tests that must pass (not skip)
}

func suiteRuns(long bool) []suiteRun {
	mptest := suiteRun{
		name: "mptest", pkg: "vfs/tests/mptest",
		args: []string{"-test.run=^Test_mptest$/^(multiwrite01|crash01|config01|config02)(_wal)?$"},
		tests: []string{"multiwrite01", "multiwrite01_wal", "crash01", "crash01_wal",
			"config01", "config02"},
	}
	parallel := suiteRun{
		name: "parallel", pkg: "tests/parallel",
		args:  []string{"-test.run=^(Test_parallel|Test_wal)$"},
		tests: []string{"Test_parallel", "Test_wal"},
	}
	multiProcess := suiteRun{
		name: "multiprocess", pkg: "tests/parallel",
		args:  []string{"-test.run=^Test_MultiProcess_(rollback|wal)$"},
		tests: []string{"Test_MultiProcess_rollback", "Test_MultiProcess_wal"},
	}
	walIndex := suiteRun{
		name: "walindex", pkg: "vfs/tests",
		args:  []string{"-test.run=^TestWALShmRollbackCorruption$"},
		tests: []string{"TestWALShmRollbackCorruption"},
	}
	walStress := suiteRun{
		name: "walstress", pkg: "vfs/tests",
		args:  []string{"-test.run=^TestWALConcurrentWriters$"},
		env:   []string{"SQLITE3_TEST_WAL_STRESS=1", "SQLITEVFS_WAL_ITERS=100", "SQLITEVFS_WAL_ROUNDS=1"},
		tests: []string{"TestWALConcurrentWriters"},
	}
	if long {
		walStress.env = []string{"SQLITE3_TEST_WAL_STRESS=1"} // upstream's 2,000 transactions, three rounds
	} else {
		parallel.args = append(parallel.args, "-test.short")
	}
	return []suiteRun{mptest, parallel, multiProcess, walIndex, walStress}
}

// runSuite runs one suiteRun in mode and checks that it passed, ran
// every test it names, and opened its databases through the VFS in mode.
func runSuite(t *testing.T, bin, mode string, run suiteRun) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "opens.log")
	args := append([]string{"-test.v", "-test.count=1", "-test.timeout=30m"}, run.args...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(bin)
	var env []string
	for _, kv := range os.Environ() {
		// mptest skips config02 when CI is set.
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "SQLITEVFS_SUITE_MODE="+mode, "SQLITEVFS_SUITE_LOG="+logPath,
		"TMPDIR="+dir)
	cmd.Env = append(cmd.Env, run.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	outPath := filepath.Join(os.TempDir(), fmt.Sprintf("sqlitevfs-suite-%s-%s-%d.log", mode, run.name, os.Getpid()))

	passed, failed, skipped := suiteResults(out.Bytes())
	for name, d := range passed {
		t.Logf("%s: PASS (%s)", name, d)
	}
	if err != nil || len(failed) > 0 {
		os.WriteFile(outPath, out.Bytes(), 0o644)
		t.Errorf("%s %s: %v; failed: %q; output in %s, its end:\n%s", bin, strings.Join(args, " "), err, failed, outPath, tail(out.Bytes(), 60))
	}
	for _, name := range run.tests {
		if _, ok := passed[name]; !ok {
			t.Errorf("%s did not pass (skipped: %q)", name, skipped)
		}
	}
	if s := mptestSummaries(out.Bytes()); s != "" {
		t.Logf("mptest: %s", s)
		if strings.Contains(s, " out of 0 tests") {
			t.Errorf("an mptest script ran no tests: %s", s)
		}
	}
	if !strings.HasPrefix(mode, "stock") {
		checkOpens(t, logPath, mode)
	}
	t.Logf("%s in %s mode: %.1f s", run.name, mode, elapsed.Seconds())
}

var resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+) \(([0-9.]+s)\)`)

// suiteResults returns the tests (and subtests, by their last name) that
// passed, with their times, that failed, and that were skipped.
func suiteResults(out []byte) (passed map[string]string, failed, skipped []string) {
	passed = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := resultLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[2][strings.LastIndexByte(m[2], '/')+1:]
		switch m[1] {
		case "PASS":
			passed[name] = m[3]
		case "FAIL":
			failed = append(failed, m[2])
		case "SKIP":
			skipped = append(skipped, m[2])
		}
	}
	return passed, failed, skipped
}

// mptestSummaries returns mptest's "Summary: N errors out of M tests"
// lines, one per script run.
func mptestSummaries(out []byte) string {
	var s []string
	for _, line := range strings.Split(string(out), "\n") {
		if _, after, ok := strings.Cut(line, "Summary: "); ok {
			s = append(s, after)
		}
	}
	return strings.Join(s, "; ")
}

func tail(b []byte, lines int) string {
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(ls[max(0, len(ls)-lines):], "\n")
}

// checkOpens checks the records suiteVFS wrote, one line per main
// database opened ("direct descriptors, all descriptors" of the file in
// that process): some databases were opened through the VFS, all of them
// held O_DIRECT in direct mode, none in page-cache mode.
func checkOpens(t *testing.T, logPath, mode string) {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("no database was opened through the diskio VFS: %v", err)
	}
	opens, direct := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d, all int
		if _, err := fmt.Sscan(line, &d, &all); err != nil {
			t.Fatalf("%s: %q: %v", logPath, line, err)
		}
		opens++
		if d > 0 {
			direct++
		}
	}
	t.Logf("%d main databases opened through the diskio VFS, %d of them O_DIRECT", opens, direct)
	switch {
	case mode == "direct" && direct != opens:
		t.Errorf("direct mode: %d of %d databases opened without O_DIRECT (TMPDIR on a filesystem without it?)", opens-direct, opens)
	case mode == "pagecache" && direct != 0:
		t.Errorf("page-cache mode: %d databases opened O_DIRECT", direct)
	}
}

// A suitePatch replaces old with new in a file of the copy, exactly n
// times.
type suitePatch struct {
	file, old, new string
	n              int
}

// suitePatches make the upstream tests name the diskio VFS.
var suitePatches = []suitePatch{
	// mptest: the default-VFS environments (rollback and WAL) name it.
	{"vfs/tests/mptest/mptest_test.go", `{name: ""},`, `{name: "", vfs: "diskio"},`, 1},
	{"vfs/tests/mptest/mptest_test.go", `{name: "_wal", isWAL: true},`, `{name: "_wal", vfs: "diskio", isWAL: true},`, 1},
	// config01 runs only if vfsname() is "os", but no VFS of go-sqlite3
	// answers SQLITE_FCNTL_VFSNAME, so it runs nothing, upstream too;
	// without the condition it runs its 163 tests.
	{"vfs/tests/mptest/testdata/config01.test", "--if vfsname() GLOB 'os'\n", "", 1},
	// tests/parallel: every file database of the default VFS, in both
	// processes of the multi-process tests.
	{"tests/parallel/parallel_test.go", `"?_pragma=busy_timeout(10000)"`, `"?vfs=diskio&_pragma=busy_timeout(10000)"`, 8},
	// The WAL tests' databases.
	{"vfs/tests/wal_stress_test.go", `RawQuery: url.Values{`, `RawQuery: url.Values{"vfs": {"diskio"},`, 1},
	{"vfs/tests/wal_shm_test.go", `RawQuery: url.Values{`, `RawQuery: url.Values{"vfs": {"diskio"},`, 3},
	// The WAL stress test's size, from the environment (suiteVFS): its
	// constants by default.
	{"vfs/tests/wal_stress_test.go", "\t\titers     = 2000\n", "", 1},
	{"vfs/tests/wal_stress_test.go", "\t\tmaxRounds = 3\n", "", 1},
}

// suiteVFS is the file added to each test package of the copy (%s: the
// package name).
const suiteVFS = `package %s

// Added by sqlitevfs's TestGoSQLite3Suites.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/diskio-go/diskio/contrib/sqlitevfs"
	"github.com/ncruces/go-sqlite3/util/vfsutil"
	"github.com/ncruces/go-sqlite3/vfs"
)

func init() {
	m := os.Getenv("SQLITEVFS_SUITE_MODE")
	if m == "stock" {
		vfs.Register("diskio", vfs.Find(""))
		return
	}
	if d, ok := strings.CutPrefix(m, "stock+"); ok {
		delay, err := time.ParseDuration(d)
		if err != nil {
			panic(err)
		}
		vfs.Register("diskio", slowVFS{vfs.Find("").(vfs.VFSFilename), delay})
		return
	}
	mode, err := sqlitevfs.ParseMode(m)
	if err != nil {
		panic(err)
	}
	vfs.Register("diskio", checkedVFS{sqlitevfs.New(sqlitevfs.Options{Mode: mode})})
}

var (
	iters     = envInt("SQLITEVFS_WAL_ITERS", 2000)
	maxRounds = envInt("SQLITEVFS_WAL_ROUNDS", 3)
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// slowVFS is the default VFS whose main databases' reads each take delay
// longer (a device read instead of a page-cache copy).
type slowVFS struct {
	vfs.VFSFilename
	delay time.Duration
}

func (v slowVFS) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, fl, err := v.VFSFilename.OpenFilename(name, flags)
	if err == nil && flags&vfs.OPEN_MAIN_DB != 0 {
		f = slowFile{f, v.delay}
	}
	return f, fl, err
}

// slowFile passes on the shared memory (WAL mode) and the lock state, as
// go-sqlite3's own wrapping test VFS (vfs/tests/torn_test.go) does.
type slowFile struct {
	vfs.File
	delay time.Duration
}

func (f slowFile) ReadAt(p []byte, off int64) (int, error) {
	time.Sleep(f.delay)
	return f.File.ReadAt(p, off)
}

func (f slowFile) SharedMemory() vfs.SharedMemory { return vfsutil.WrapSharedMemory(f.File) }
func (f slowFile) LockState() vfs.LockLevel       { return vfsutil.WrapLockState(f.File) }

type checkedVFS struct{ *sqlitevfs.VFS }

func (v checkedVFS) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, fl, err := v.VFS.OpenFilename(name, flags)
	if err == nil && flags&vfs.OPEN_MAIN_DB != 0 {
		noteOpen(name.String())
	}
	return f, fl, err
}

// noteOpen records how many of this process's descriptors of path are
// O_DIRECT, and how many there are.
func noteOpen(path string) {
	direct, all := 0, 0
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || target != path {
			continue
		}
		all++
		info, _ := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				fl, _ := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
				if fl&syscall.O_DIRECT != 0 {
					direct++
				}
			}
		}
	}
	f, err := os.OpenFile(os.Getenv("SQLITEVFS_SUITE_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%%d %%d\n", direct, all)
	f.Close()
}
`

// suitePackages are the copy's test packages the suites run, with their
// package names.
var suitePackages = map[string]string{
	"vfs/tests/mptest": "mptest",
	"tests/parallel":   "tests",
	"vfs/tests":        "tests",
}

// buildSuites copies go-sqlite3 from the module cache, patches it, and
// builds its test packages against this module; it returns the test
// binaries by package.
func buildSuites(t *testing.T) map[string]string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("SQLITEVFS_REQUIRE_SUITES") != "" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if _, err := exec.LookPath("go"); err != nil {
		skip("go-sqlite3's suites need the go command on PATH: %v", err)
	}
	modDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	goCmd := func(dir string, args ...string) ([]byte, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return out, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return out, nil
	}
	// Where the module cache has go-sqlite3, and the diskio this module
	// builds against (its replace directive).
	out, err := goCmd(modDir, "mod", "download", "-json", "github.com/ncruces/go-sqlite3")
	if err != nil {
		skip("go-sqlite3's suites need github.com/ncruces/go-sqlite3 in the module cache or from the proxy: %v", err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		skip("go-sqlite3's suites need github.com/ncruces/go-sqlite3 in the module cache or from the proxy: %v %s", err, mod.Error)
	}
	src := mod.Dir
	out, err = goCmd(modDir, "list", "-m", "-f", "{{.Dir}}", "github.com/diskio-go/diskio")
	if err != nil {
		t.Fatal(err)
	}
	diskioDir := strings.TrimSpace(string(out))

	copyDir := filepath.Join(t.TempDir(), "go-sqlite3")
	if keep := os.Getenv("SQLITEVFS_SUITES_DIR"); keep != "" {
		copyDir = keep // kept, with its test binaries, to run them by hand
	}
	if err := os.CopyFS(copyDir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for _, p := range suitePatches {
		name := filepath.Join(copyDir, p.file)
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte(p.old)); n != p.n {
			t.Fatalf("%s: %q found %d times, want %d: go-sqlite3's tests have changed; update suitePatches", p.file, p.old, n, p.n)
		}
		if err := os.WriteFile(name, bytes.ReplaceAll(b, []byte(p.old), []byte(p.new)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pkg, name := range suitePackages {
		f := filepath.Join(copyDir, pkg, "sqlitevfs_suite_test.go")
		if err := os.WriteFile(f, fmt.Appendf(nil, suiteVFS, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The copy requires this module (and diskio) from their directories,
	// with their checksums. The segmentio/go-hll fork go-sqlite3 replaces
	// it with is not on the module proxy, and only ext/approx, which no
	// suite builds, needs it.
	gomod, err := os.ReadFile(filepath.Join(copyDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	edit := []string{"mod", "edit",
		"-require=github.com/diskio-go/diskio/contrib/sqlitevfs@v0.0.0",
		"-replace=github.com/diskio-go/diskio/contrib/sqlitevfs=" + modDir,
		"-replace=github.com/diskio-go/diskio=" + diskioDir}
	if bytes.Contains(gomod, []byte("github.com/segmentio/go-hll")) {
		edit = append(edit, "-dropreplace=github.com/segmentio/go-hll", "-droprequire=github.com/segmentio/go-hll")
	}
	if _, err := goCmd(copyDir, edit...); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(modDir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(copyDir, "go.sum"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(sums)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	bins := map[string]string{}
	for pkg := range suitePackages {
		bin := filepath.Join(copyDir, pkg, strings.ReplaceAll(pkg, "/", "_")+".test")
		if out, err := goCmd(copyDir, "test", "-c", "-o", bin, "./"+pkg); err != nil {
			if errors.Is(err, exec.ErrNotFound) || bytes.Contains(out, []byte("dial tcp")) || bytes.Contains(out, []byte("proxy")) {
				skip("go-sqlite3's suites need their modules (downloadable or in the module cache): %v", err)
			}
			t.Fatal(err)
		}
		bins[pkg] = bin
	}
	return bins
}
