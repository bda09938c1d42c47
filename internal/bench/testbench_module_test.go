package bench

import (
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTestbenchModule runs the tests of cmd/testbench, the heaviest user of
// this package. The testbench is a module of its own (its plotting and
// statistics modules stay out of diskio's go.mod), and a ./... pattern does
// not cross into a nested module, so without this test the repository's
// test command, go test -race ./... from the root, would leave it out. The
// run gets this one's -race, -short, -v, -count and what is left of its
// -timeout, and the caller's environment.
func TestTestbenchModule(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "cmd", "testbench")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		// Built from a module zip (go test all in a module that requires
		// diskio), which holds no nested module.
		t.Skipf("no testbench module beside this package: %v", err)
	}
	args := []string{"test"}
	if raceEnabled {
		args = append(args, "-race")
	}
	if testing.Short() {
		args = append(args, "-short")
	}
	if testing.Verbose() {
		args = append(args, "-v")
	}
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.count" {
			args = append(args, "-count="+f.Value.String())
		}
	})
	if d, ok := t.Deadline(); ok {
		left := time.Until(d) - 30*time.Second // to report a timeout before ours
		if left <= 0 {
			t.Fatalf("%v is too short a -timeout to run the testbench's tests", time.Until(d))
		}
		args = append(args, "-timeout="+left.Round(time.Second).String())
	}
	args = append(args, "./...")
	watchInputs(t, root)

	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cd cmd/testbench && go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("cd cmd/testbench && go %s (%v):\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out)
}

// watchInputs opens every file of the repository's workspace and reads
// every variable of the environment, so that go test's cache, which keys a
// result on the files and variables a test reads itself, reruns this test
// when anything the testbench's tests depend on changes.
func watchInputs(t *testing.T, root string) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		os.Getenv(name)
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || path == filepath.Join(root, "contrib")) {
			return filepath.SkipDir // not part of the workspace
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		return f.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
