package withtest

import (
	"os"
	"testing"
)

func check(t *testing.T, f *os.File) {
	if _, err := f.Stat(); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	s, err := open("withtest.go")
	if err != nil {
		t.Fatal(err)
	}
	check(t, other(s.f))
}

// other is a function value: what it gets stays *os.File.
var other = func(f *os.File) *os.File { return f }
