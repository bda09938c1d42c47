package seccomp

import (
	"fmt"
	"strings"
)

// Set is a set of system-call families to refuse.
type Set uint8

const (
	// URing is io_uring_setup, io_uring_enter and io_uring_register.
	URing Set = 1 << iota
	// AIO is io_setup, io_destroy, io_submit, io_cancel, io_getevents
	// and io_pgetevents.
	AIO
)

// names are the families' names in Parse and String, in their bit order.
var names = [...]string{"uring", "aio"}

// calls are the families' system calls, by the kernel's names, in the
// order of the numbers syscalls (seccomp_linux.go) gives.
var calls = [...][]string{
	{"io_uring_setup", "io_uring_enter", "io_uring_register"},
	{"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents"},
}

// Calls names the system calls a filter refusing s refuses.
func (s Set) Calls() []string {
	var out []string
	for i, c := range calls {
		if s&(1<<i) != 0 {
			out = append(out, c...)
		}
	}
	return out
}

// Parse reads a comma-separated list of families ("uring", "aio"), as
// String writes it; the empty string is the empty Set.
func Parse(s string) (Set, error) {
	var set Set
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		i := indexOf(f)
		if i < 0 {
			return 0, fmt.Errorf("seccomp: unknown system-call family %q (want uring or aio, comma-separated)", f)
		}
		set |= 1 << i
	}
	return set, nil
}

func indexOf(name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// String names the families in s, comma-separated ("uring,aio"); the
// empty Set is "".
func (s Set) String() string {
	var out []string
	for i, n := range names {
		if s&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return strings.Join(out, ",")
}
