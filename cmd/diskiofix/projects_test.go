package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// projects are real projects with file-heavy code, pinned, which
// TestProjects moves onto diskio with the command and tests with their
// own suites. flags are the command's for each.
var projects = []struct {
	module, version string
	flags           []string
}{
	{"github.com/tidwall/wal", "v1.2.1", nil},
	// Options.OpenFile is a hook of bbolt's exported API, whose default
	// is os.OpenFile: -exported moves it with the DB's file.
	{"go.etcd.io/bbolt", "v1.3.6", []string{"-exported"}},
	{"go.etcd.io/bbolt", "v1.4.3", []string{"-exported"}},
	// Its fs package hands one file to etcd's fileutil.Preallocate,
	// which wants *os.File: that file stays, the others move.
	{"github.com/hashicorp/raft-wal", "v0.4.2", nil},
}

// TestProjects copies each project from the module cache into a
// temporary directory (fetching it through the module proxy if the cache
// lacks it), requires diskio there, runs the command with -fix, and runs
// the project's own tests three times: before the fix (os.File), after it
// (diskio's defaults), and after it with Direct made the default by a
// test file's init. The same tests must pass in all three. It logs what
// the command moved and left, and the counts and times.
//
// DISKIOFIX_PROJECTS=short runs the suites with -short, =full without.
func TestProjects(t *testing.T) {
	mode := os.Getenv("DISKIOFIX_PROJECTS")
	if mode != "short" && mode != "full" {
		t.Skip("set DISKIOFIX_PROJECTS=short or =full to run real projects' suites through the command (minutes)")
	}
	root := repoRoot(t)
	bin := buildTool(t)
	for _, p := range projects {
		t.Run(p.module+"@"+p.version, func(t *testing.T) {
			dir := copyProject(t, p.module, p.version, root)
			base := goTest(t, dir, mode)

			out, _ := run(t, dir, bin, append(p.flags, "./...")...)
			moved, left := strings.Count(out, " can be "), strings.Count(out, " stays on *os.File")
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, " stays on *os.File") {
					t.Logf("left: %s", strings.TrimPrefix(l, dir+"/"))
				}
			}
			if out, code := run(t, dir, bin, append(p.flags, "-fix", "./...")...); code != 0 && code != 3 {
				t.Fatalf("-fix: exit %d\n%s", code, out)
			}
			// The project's own files may predate today's gofmt:
			// only what the fix wrote must be formatted.
			unformatted, _ := run(t, dir+".orig", "gofmt", "-l", ".")
			if out, _ := run(t, dir, "gofmt", "-l", "."); out != unformatted {
				t.Errorf("gofmt -l after -fix:\n%s\nbefore:\n%s", out, unformatted)
			}
			if out, code := run(t, dir, "go", "build", "./..."); code != 0 {
				t.Fatalf("go build after -fix: exit %d\n%s", code, out)
			}
			files := changedFiles(t, dir)
			def := goTest(t, dir, mode)
			direct := makeDirectDefault(t, dir)
			dir2 := goTest(t, dir, mode)
			t.Logf("%s %s: %d opens moved, %d left, in %d files (%s); Direct set in %d packages",
				p.module, p.version, moved, left, len(files), strings.Join(files, " "), direct)
			for _, r := range []struct {
				name string
				res  testResult
			}{{"os.File", base}, {"diskio", def}, {"diskio Direct", dir2}} {
				t.Logf("%-14s %d passed, %d skipped, %d failed, %.1f s", r.name, r.res.pass, r.res.skip, r.res.fail, r.res.elapsed.Seconds())
			}
			if moved == 0 {
				t.Errorf("the command moved nothing")
			}
			if base.fail > 0 {
				// Failing before the fix too: the project's
				// (bbolt's tests/failpoint want a gofail build).
				t.Logf("failing with os.File too:\n%s", base.failures)
			}
			if base.pass == 0 {
				t.Fatalf("no test passed before the fix")
			}
			for _, r := range []testResult{def, dir2} {
				if r.pass != base.pass || r.failures != base.failures {
					t.Errorf("after the fix: %d passed (%d before), %d failed:\n%s\nbefore:\n%s", r.pass, base.pass, r.fail, r.failures, base.failures)
				}
			}
		})
	}
}

// copyProject copies module@version from the module cache into a
// temporary directory, writable, requiring diskio from root.
func copyProject(t *testing.T, module, version, root string) string {
	t.Helper()
	tmp := t.TempDir()
	out, code := run(t, tmp, "go", "mod", "download", "-json", module+"@"+version)
	var info struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(out), &info); err != nil || code != 0 || info.Dir == "" {
		t.Skipf("%s@%s not in the module cache nor fetched: %s %s", module, version, info.Error, out)
	}
	dir := filepath.Join(tmp, "src")
	if out, err := exec.Command("cp", "-r", info.Dir, dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", dir).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"mod", "edit", "-require=github.com/diskio-go/diskio@v0.0.0", "-replace=github.com/diskio-go/diskio=" + root},
		{"mod", "tidy"},
	} {
		if out, code := run(t, dir, "go", args...); code != 0 {
			t.Fatalf("go %v: exit %d\n%s", args, code, out)
		}
	}
	// The pristine copy, for the list of files the fix changes.
	if out, err := exec.Command("cp", "-r", dir, dir+".orig").CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return dir
}

// changedFiles lists the .go files the fix changed, by name.
func changedFiles(t *testing.T, dir string) []string {
	out, _ := exec.Command("diff", "-rq", dir+".orig", dir).CombinedOutput()
	var files []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 5 && strings.HasSuffix(f[3], ".go") {
			files = append(files, strings.TrimPrefix(f[3], dir+"/"))
		}
	}
	return files
}

// makeDirectDefault adds, to each package the fix made import diskio, a
// test file whose init makes Direct the default, and returns how many.
func makeDirectDefault(t *testing.T, dir string) int {
	out, code := run(t, dir, "go", "list", "-f", `{{.Dir}} {{.Name}} {{range .Imports}}{{if eq . "github.com/diskio-go/diskio"}}diskio{{end}}{{end}}{{range .TestImports}}{{if eq . "github.com/diskio-go/diskio"}}diskio{{end}}{{end}}`, "./...")
	if code != 0 {
		t.Fatalf("go list: %s", out)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		src := fmt.Sprintf("package %s\n\nimport \"github.com/diskio-go/diskio\"\n\nfunc init() { diskio.SetDefaultOptions(diskio.WithDirect(diskio.Direct)) }\n", f[1])
		if err := os.WriteFile(filepath.Join(f[0], "zz_diskio_direct_test.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

type testResult struct {
	pass, skip, fail int
	elapsed          time.Duration
	failures         string
}

// goTest runs the project's tests (-short unless mode is full; vet off:
// its checks are the project's business, and the go directive tidy
// raised to diskio's turns on some) and counts the tests and subtests.
func goTest(t *testing.T, dir, mode string) testResult {
	t.Helper()
	args := []string{"test", "-json", "-count=1", "-vet=off"}
	if mode != "full" {
		args = append(args, "-short")
	}
	start := time.Now()
	out, _ := run(t, dir, "go", append(args, "./...")...)
	r := testResult{elapsed: time.Since(start)}
	var fails strings.Builder
	var failed []string // the failed tests, by package and name
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct{ Action, Package, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			fails.WriteString(sc.Text() + "\n") // a build failure
			continue
		}
		switch {
		case ev.Test == "":
			if ev.Action == "fail" {
				r.fail++
				fmt.Fprintf(&fails, "package %s failed\n", ev.Package)
			}
		case ev.Action == "pass":
			r.pass++
		case ev.Action == "skip":
			r.skip++
		case ev.Action == "fail":
			r.fail++
			failed = append(failed, ev.Package+" "+ev.Test+"\n")
		}
	}
	slices.Sort(failed)
	r.failures = fails.String() + strings.Join(failed, "")
	return r
}
