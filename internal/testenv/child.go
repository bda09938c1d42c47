package testenv

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// RunChild runs the calling test again, alone, in a child process (this
// test binary, re-executed with env added to its environment), and makes
// the child's outcome the test's: a failure fails it with the child's
// output, a skip skips it with the child's output, a pass logs it. The
// caller returns after RunChild; the child, which finds env set, runs the
// test's body. The child gets the test's remaining time as its timeout.
func RunChild(t *testing.T, env ...string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=" + runPattern(t.Name()), "-test.v", "-test.count=1"}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).Round(time.Second).String())
	}
	cmd := exec.Command(exe, args...)
	// Under -race the child would otherwise sleep 1s at exit.
	cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("child %v %v: %v\n%s", env, args, err, out)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()+" "):
		t.Skipf("child %v skipped:\n%s", env, out)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()+" "):
		t.Fatalf("child %v did not run %s:\n%s", env, t.Name(), out)
	}
	t.Logf("child %v:\n%s", env, out)
}

// runPattern is the -test.run pattern that selects exactly the test (or
// subtest) named name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
