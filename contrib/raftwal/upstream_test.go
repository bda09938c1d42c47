package raftwal_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestUpstream runs raft-wal's own tests on the adapter, in both modes:
// its integration scenarios (4 KiB segments rotating, head and tail
// truncation, close and reopen), which open the WAL with its default VFS,
// and its file-layer test (fs.TestFS, fs.TestRealFSNoDir), which tests
// fs.New(). raft-wal's module is copied from the module cache (the version
// this module requires) into a temporary directory and patched there: the
// WAL's default VFS and the file-layer tests' New() become this package's
// VFS in the mode RAFTWAL_TEST_MODE names, and a test of ours checks that
// they did. Nothing of raft-wal's is kept in this repository.
//
// It needs the go command and the module proxy or a module cache holding
// raft-wal's test dependencies; it skips when go is missing.
func TestUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping raft-wal's own tests")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		var lerr error
		if goCmd, lerr = exec.LookPath("go"); lerr != nil {
			t.Skip("the go command is missing: it runs raft-wal's tests")
		}
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join(here, "..", ".."))
	if err != nil {
		t.Fatal(err)
	}

	// Where the module cache holds the raft-wal this module requires.
	out := goRun(t, here, goCmd, "list", "-m", "-json", "github.com/hashicorp/raft-wal")
	var mod struct{ Path, Version, Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go list -m: %v\n%s", err, out)
	}
	if mod.Dir == "" {
		goRun(t, here, goCmd, "mod", "download", "github.com/hashicorp/raft-wal")
		out = goRun(t, here, goCmd, "list", "-m", "-json", "github.com/hashicorp/raft-wal")
		if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
			t.Fatalf("raft-wal is not in the module cache: %v\n%s", err, out)
		}
	}
	t.Logf("raft-wal %s from %s", mod.Version, mod.Dir)

	work := filepath.Join(t.TempDir(), "raft-wal")
	copyTree(t, mod.Dir, work)

	// The WAL's default VFS (used by the integration scenarios, which
	// open the WAL on a directory) becomes ours.
	patch(t, filepath.Join(work, "options.go"), "vfs := fs.New()", "vfs := diskioVFS(fs.New())", 1)
	write(t, filepath.Join(work, "zz_diskio.go"), `package wal

import (
	"os"
	"sync/atomic"

	raftwal "github.com/diskio-go/diskio/contrib/raftwal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/types"
)

// DiskioVFSOpened counts the WALs opened on the diskio VFS.
var DiskioVFSOpened atomic.Int64

func diskioVFS(*fs.FS) types.VFS {
	m, err := raftwal.ParseMode(os.Getenv("RAFTWAL_TEST_MODE"))
	if err != nil {
		panic(err)
	}
	DiskioVFSOpened.Add(1)
	return raftwal.New(raftwal.Options{Mode: m})
}
`)
	write(t, filepath.Join(work, "integration", "zz_diskio_test.go"), `package integration

import (
	"testing"

	wal "github.com/hashicorp/raft-wal"
)

// Runs after the scenarios (tests run in the order of their files).
func TestZZDiskioVFSUsed(t *testing.T) {
	n := wal.DiskioVFSOpened.Load()
	t.Logf("WALs opened on the diskio VFS: %d", n)
	if n == 0 {
		t.Fatal("the scenarios did not open the diskio VFS")
	}
}
`)
	// The file-layer tests test New(): make it ours.
	patch(t, filepath.Join(work, "fs", "fs_test.go"), "fs := New()", "fs := diskioVFS()", 2)
	write(t, filepath.Join(work, "fs", "zz_diskio_test.go"), `package fs

import (
	"os"
	"testing"

	raftwal "github.com/diskio-go/diskio/contrib/raftwal"
	"github.com/hashicorp/raft-wal/types"
)

var diskioVFSOpened int

func diskioVFS() types.VFS {
	m, err := raftwal.ParseMode(os.Getenv("RAFTWAL_TEST_MODE"))
	if err != nil {
		panic(err)
	}
	diskioVFSOpened++
	return raftwal.New(raftwal.Options{Mode: m})
}

func TestZZDiskioVFSUsed(t *testing.T) {
	if diskioVFSOpened < 2 {
		t.Fatalf("the file-layer tests opened the diskio VFS %d times, want 2", diskioVFSOpened)
	}
}
`)
	// The copy requires this module and the diskio beside it.
	gomod := filepath.Join(work, "go.mod")
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, []byte("\nrequire github.com/diskio-go/diskio/contrib/raftwal v0.0.0\n"+
		"replace github.com/diskio-go/diskio/contrib/raftwal => "+here+"\n"+
		"replace github.com/diskio-go/diskio => "+root+"\n")...)
	if err := os.WriteFile(gomod, b, 0o644); err != nil {
		t.Fatal(err)
	}
	goRun(t, work, goCmd, "mod", "tidy")

	for _, mode := range []string{"pagecache", "direct"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"test", "-count=1", "-v"}
			if raceEnabled {
				args = append(args, "-race")
			}
			args = append(args, "./fs/", "./integration/")
			cmd := exec.Command(goCmd, args...)
			cmd.Dir = work
			cmd.Env = append(goEnv(), "RAFTWAL_TEST_MODE="+mode, "TMPDIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("raft-wal's tests on the %s VFS: %v\n%s", mode, err, out)
			}
			// Every test named here must have run and passed.
			for _, name := range []string{"TestFS", "TestRealFSNoDir", "TestIntegrationScenarios", "TestZZDiskioVFSUsed"} {
				if !strings.Contains(string(out), "--- PASS: "+name+" ") {
					t.Errorf("%s did not pass:\n%s", name, out)
				}
			}
			if strings.Contains(string(out), "--- SKIP") {
				t.Errorf("a test skipped:\n%s", out)
			}
			passed := strings.Count(string(out), "--- PASS")
			t.Logf("%s: %d raft-wal tests and subtests passed", mode, passed)
		})
	}
}

func goEnv() []string {
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOWORK=") && !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	return env
}

func goRun(t *testing.T, dir, goCmd string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return out
}

// copyTree copies the regular files under from to to, writable.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// patch replaces old with new in file, which must hold exactly n of old.
func patch(t *testing.T, file, old, new string, n int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(string(b), old); c != n {
		t.Fatalf("%s holds %q %d times, want %d: raft-wal changed, update the patch", file, old, c, n)
	}
	write(t, file, strings.ReplaceAll(string(b), old, new))
}

func write(t *testing.T, file, s string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
