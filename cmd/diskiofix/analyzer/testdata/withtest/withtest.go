// Package withtest has internal tests that take its file as an
// *os.File: only the variant with them sees it, and leaves the file.
package withtest

import "os"

type store struct{ f *os.File }

func open(name string) (*store, error) {
	f, err := os.Open(name) // TestCommand: "stays on *os.File: it is passed to other"
	if err != nil {
		return nil, err
	}
	return &store{f: f}, nil
}
