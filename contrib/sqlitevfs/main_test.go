//go:build linux

package sqlitevfs

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/diskio-go/diskio/internal/testenv"
)

// childEnv names the role a re-executed test binary plays (children.go's
// functions); the parent passes the rest of the child's arguments in
// other SQLITEVFS_ variables.
const childEnv = "SQLITEVFS_CHILD"

var childRoles = map[string]func() error{}

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		run, ok := childRoles[role]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown child role %q\n", role)
			os.Exit(2)
		}
		if err := run(); err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", role, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testenv.InstallFilter() // DISKIO_TEST_SECCOMP
	os.Exit(m.Run())
}

// child returns a command running this test binary as a child in role,
// with env added to its environment.
func child(t testing.TB, role string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}
