package seccomp

import (
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Set
		out  string
	}{
		{"", 0, ""},
		{"uring", URing, "uring"},
		{"aio", AIO, "aio"},
		{"uring,aio", URing | AIO, "uring,aio"},
		{" aio , uring ,", URing | AIO, "uring,aio"},
	} {
		got, err := Parse(c.in)
		if err != nil || got != c.want || got.String() != c.out {
			t.Errorf("Parse(%q) = %v (%q), %v; want %v (%q)", c.in, got, got, err, c.want, c.out)
		}
	}
	if _, err := Parse("uring,epoll"); err == nil {
		t.Error("Parse accepted epoll")
	}
}
