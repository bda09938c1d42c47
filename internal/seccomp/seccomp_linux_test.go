//go:build linux

package seccomp_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	. "github.com/diskio-go/diskio/internal/seccomp"
	"github.com/diskio-go/diskio/internal/testenv"
)

// childEnv carries the Set a child process of TestInstall installs.
const childEnv = "SECCOMP_TEST_INSTALL"

// TestInstall: in a child process that installs the filter, the refused
// calls fail with EPERM on every thread (one started before the filter
// too) and in the processes it starts; the others work, among them the
// family the filter does not name. Each refused call worked (or failed
// otherwise) before the filter, in the same process.
func TestInstall(t *testing.T) {
	for _, set := range []Set{URing, URing | AIO, AIO} {
		t.Run(set.String(), func(t *testing.T) {
			if os.Getenv(childEnv) == "" {
				testenv.RunChild(t, childEnv+"="+set.String())
				return
			}
			if os.Getenv(childEnv) != set.String() {
				t.Skip("another child's set")
			}
			installChild(t, set)
		})
	}
}

// call is one system call with arguments that the kernel answers
// without a filter: a ring or context is set up and freed again; the
// other calls get a descriptor or context that does not exist.
type call struct {
	name string
	do   func() syscall.Errno
}

// calls returns the family's calls.
func calls(family Set) []call {
	none := func(nr uintptr) func() syscall.Errno {
		return func() syscall.Errno {
			_, _, e := unix.Syscall6(nr, ^uintptr(0), 0, 0, 0, 0, 0)
			return e
		}
	}
	switch family {
	case URing:
		return []call{
			{"io_uring_setup", func() syscall.Errno {
				var p [120]byte // struct io_uring_params
				fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&p)), 0)
				if e == 0 {
					unix.Close(int(fd))
				}
				return e
			}},
			{"io_uring_enter", none(unix.SYS_IO_URING_ENTER)},
			{"io_uring_register", none(unix.SYS_IO_URING_REGISTER)},
		}
	case AIO:
		return []call{
			{"io_setup", func() syscall.Errno {
				var ctx uint64
				_, _, e := unix.Syscall(unix.SYS_IO_SETUP, 1, uintptr(unsafe.Pointer(&ctx)), 0)
				if e == 0 {
					unix.Syscall(unix.SYS_IO_DESTROY, uintptr(ctx), 0, 0)
				}
				return e
			}},
			{"io_destroy", none(unix.SYS_IO_DESTROY)},
			{"io_submit", none(unix.SYS_IO_SUBMIT)},
			{"io_cancel", none(unix.SYS_IO_CANCEL)},
			{"io_getevents", none(unix.SYS_IO_GETEVENTS)},
			{"io_pgetevents", none(unix.SYS_IO_PGETEVENTS)},
		}
	}
	panic("one family at a time")
}

// before checks that the family works here without a filter (its setup
// call succeeds), so that EPERM afterwards is the filter's doing, and
// returns each call's errno.
func before(t *testing.T, family Set) []syscall.Errno {
	cs := calls(family)
	var errs []syscall.Errno
	for _, c := range cs {
		errs = append(errs, c.do())
	}
	if errs[0] != 0 {
		testenv.Unavailable(t, family.String(), os.NewSyscallError(cs[0].name, errs[0]))
	}
	return errs
}

// after checks each call of family against want: EPERM if refused, else
// what the call gave before the filter.
func after(t *testing.T, family Set, refused bool, was []syscall.Errno) {
	t.Helper()
	for i, c := range calls(family) {
		want := was[i]
		if refused {
			want = unix.EPERM
		}
		if got := c.do(); got != want {
			t.Errorf("%s: errno %d (%v), want %d (%v)", c.name, got, got, want, want)
		}
	}
}

func installChild(t *testing.T, set Set) {
	was := map[Set][]syscall.Errno{URing: before(t, URing), AIO: before(t, AIO)}
	var x32 syscall.Errno
	if ABIBit != 0 {
		_, _, x32 = unix.Syscall(ABIBit|unix.SYS_GETPID, 0, 0, 0)
	}

	// A thread that exists before the filter, locked to its goroutine.
	ask, answer := make(chan func()), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		for f := range ask {
			f()
			answer <- struct{}{}
		}
	}()
	onOldThread := func(f func()) { ask <- f; <-answer }
	defer close(ask)

	if err := Install(set); err != nil {
		t.Fatal(err)
	}

	for _, family := range []Set{URing, AIO} {
		after(t, family, set&family != 0, was[family])
		onOldThread(func() { after(t, family, set&family != 0, was[family]) })
	}
	if ABIBit != 0 {
		if _, _, got := unix.Syscall(ABIBit|unix.SYS_GETPID, 0, 0, 0); got != unix.EPERM {
			t.Errorf("x32 getpid: errno %v (before the filter %v), want EPERM", got, x32)
		}
	}

	// Every thread of the process is filtered, and runs without new
	// privileges (TSYNC gives both).
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) < 2 {
		t.Fatalf("threads: %v %v", tasks, err)
	}
	for _, p := range tasks {
		checkStatus(t, p, readFile(t, p))
	}

	// Everything else works: files, and a child process, which is
	// filtered too.
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "data" {
		t.Fatalf("read back %q, %v", b, err)
	}
	out, err := exec.Command("cat", "/proc/self/status").Output()
	if err != nil {
		t.Fatal(err)
	}
	checkStatus(t, "cat's /proc/self/status", string(out))
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) { // a thread may exit
		t.Fatal(err)
	}
	return string(b)
}

// checkStatus checks a /proc status file for the filter.
func checkStatus(t *testing.T, name, status string) {
	t.Helper()
	if status == "" {
		return
	}
	for _, want := range []string{"\nSeccomp:\t2\n", "\nNoNewPrivs:\t1\n"} {
		if !strings.Contains(status, want) {
			t.Errorf("%s lacks %q:\n%s", name, strings.TrimSpace(want), status)
		}
	}
}

// The names Calls gives are those of the numbers Program refuses.
func TestCalls(t *testing.T) {
	set := URing | AIO
	nrs, names := set.Syscalls(), set.Calls()
	if len(nrs) != len(names) {
		t.Fatalf("%d numbers, %d names", len(nrs), len(names))
	}
	byName := map[string]uint32{
		"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER, "io_uring_register": unix.SYS_IO_URING_REGISTER,
		"io_setup": unix.SYS_IO_SETUP, "io_destroy": unix.SYS_IO_DESTROY, "io_submit": unix.SYS_IO_SUBMIT,
		"io_cancel": unix.SYS_IO_CANCEL, "io_getevents": unix.SYS_IO_GETEVENTS, "io_pgetevents": unix.SYS_IO_PGETEVENTS,
	}
	for i, n := range names {
		if nr, ok := byName[n]; !ok || nr != nrs[i] {
			t.Errorf("call %d: %s, number %d", i, n, nrs[i])
		}
	}
}

// TestProgram runs the program on seccomp_data as the kernel would hand
// it: the refused calls get EPERM, others pass, and so does nothing
// through a foreign ABI.
func TestProgram(t *testing.T) {
	if _, err := Program(0); err == nil {
		t.Error("Program(0) built a filter that refuses nothing")
	}
	const allow, eperm uint32 = unix.SECCOMP_RET_ALLOW, unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	for _, set := range []Set{URing, AIO, URing | AIO} {
		prog, err := Program(set)
		if err != nil {
			t.Fatal(err)
		}
		refused := map[uint32]bool{}
		for _, nr := range set.Syscalls() {
			refused[nr] = true
		}
		for _, nr := range append((URing | AIO).Syscalls(), unix.SYS_READ, unix.SYS_GETPID, unix.SYS_SECCOMP) {
			want := allow
			if refused[nr] {
				want = eperm
			}
			if got := run(t, prog, nr, AuditArch); got != want {
				t.Errorf("%s: call %d: %#x, want %#x", set, nr, got, want)
			}
			if got := run(t, prog, nr, unix.AUDIT_ARCH_I386); got != eperm {
				t.Errorf("%s: call %d from i386: %#x, want EPERM", set, nr, got)
			}
			if ABIBit != 0 {
				if got := run(t, prog, nr|ABIBit, AuditArch); got != eperm {
					t.Errorf("%s: call %d from x32: %#x, want EPERM", set, nr, got)
				}
			}
		}
	}
}

// run interprets the instructions Program uses on a seccomp_data holding
// nr and arch, and returns the action.
func run(t *testing.T, prog []unix.SockFilter, nr, arch uint32) uint32 {
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			switch in.K {
			case 0:
				a = nr
			case 4:
				a = arch
			default:
				t.Fatalf("load of offset %d", in.K)
			}
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			taken := a == in.K
			if in.Code&unix.BPF_JSET == unix.BPF_JSET {
				taken = a&in.K != 0
			}
			if taken {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unexpected code %#x", pc, in.Code)
		}
	}
	t.Fatal("ran off the end of the program")
	return 0
}
