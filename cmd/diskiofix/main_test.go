package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the diskio module's directory, for the copies' replace.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("no diskio module at %s: %v", root, err)
	}
	return root
}

// buildTool builds the command into a temporary directory.
func buildTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "diskiofix")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// copyModule copies the module in src to a temporary directory, with
// its replace of diskio made absolute.
func copyModule(t *testing.T, src, root string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "go.mod" {
			data = replaceDiskio(data, root)
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// replaceDiskio points a go.mod's replace of diskio at root.
func replaceDiskio(gomod []byte, root string) []byte {
	var b bytes.Buffer
	for _, l := range strings.SplitAfter(string(gomod), "\n") {
		if strings.HasPrefix(l, "replace github.com/diskio-go/diskio =>") {
			l = "replace github.com/diskio-go/diskio => " + root + "\n"
		}
		b.WriteString(l)
	}
	return b.Bytes()
}

// run runs name with args in dir, outside any workspace, and returns its
// combined output and exit code.
func run(t *testing.T, dir, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out), code
}

// snapshotGo reads every .go file under dir.
func snapshotGo(t *testing.T, dir string) map[string]string {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		data, err := os.ReadFile(p)
		files[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestCommand runs the built command as a user does, on a copy of the
// analyzer's testdata module: -fix gives each file's golden text, gofmt'd;
// the module then builds and vets with its tests; a second -fix changes
// nothing and reports only what stays; go vet -vettool runs it too.
func TestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs go vet: not with -short")
	}
	root := repoRoot(t)
	bin := buildTool(t)
	dir := copyModule(t, filepath.Join("analyzer", "testdata"), root)
	before := snapshotGo(t, dir)

	out, code := run(t, dir, bin, "./...")
	if code != 3 || !strings.Contains(out, "can be diskio.Open") {
		t.Fatalf("without -fix: exit %d, want 3 (diagnostics)\n%s", code, out)
	}
	if !strings.Contains(out, `withtest.go:10:12: os.Open stays on *os.File: it is passed to other`) {
		t.Errorf("withtest's open was not left for its tests' function value:\n%s", out)
	}
	if strings.Count(out, "withtest.go:10:12") != 1 {
		t.Errorf("withtest's open reported other than once (once per package variant?):\n%s", out)
	}
	if out, code := run(t, dir, bin, "-fix", "./..."); code != 0 && code != 3 {
		t.Fatalf("-fix: exit %d\n%s", code, out)
	}
	after := snapshotGo(t, dir)
	for name, src := range after {
		golden, err := os.ReadFile(filepath.Join("analyzer", "testdata", strings.TrimPrefix(name, dir)) + ".golden")
		switch {
		case err == nil:
			if src != string(golden) {
				t.Errorf("%s after -fix:\n%s\nwant (its .golden):\n%s", name, src, golden)
			}
		case os.IsNotExist(err):
			if src != before[name] {
				t.Errorf("%s changed, and has no .golden:\n%s", name, src)
			}
		default:
			t.Fatal(err)
		}
	}
	if out, _ := run(t, dir, "gofmt", "-l", "."); out != "" {
		t.Errorf("gofmt -l after -fix:\n%s", out)
	}
	if out, code := run(t, dir, "go", "vet", "./..."); code != 0 {
		t.Fatalf("go vet after -fix: exit %d\n%s", code, out)
	}

	// Idempotent: nothing left to move, nothing changed.
	out, _ = run(t, dir, bin, "-fix", "./...")
	if strings.Contains(out, "can be") {
		t.Errorf("a second -fix still moves something:\n%s", out)
	}
	for name, src := range snapshotGo(t, dir) {
		if src != after[name] {
			t.Errorf("a second -fix changed %s:\n%s", name, src)
		}
	}
	vet, code := run(t, dir, "go", "vet", "-vettool="+bin, "./...")
	if code == 0 || !strings.Contains(vet, "stays on *os.File: it is used as a process's stdout") || strings.Contains(vet, "can be") {
		t.Errorf("go vet -vettool after -fix: exit %d\n%s", code, vet)
	}
}
