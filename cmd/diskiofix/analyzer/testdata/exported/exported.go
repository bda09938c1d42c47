// Package exported returns its files from exported functions: other
// packages' callers would need the change too.
package exported

import "os"

// Open opens a data file.
func Open(name string) (*os.File, error) {
	return os.Open(name) // want `os.Open stays on \*os.File: it is in the package's exported API \(Open's result; -exported rewrites it\)`
}

// Store holds a file in an exported field.
type Store struct {
	File *os.File
	n    int
}

// NewStore opens the store.
func NewStore(name string) (*Store, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0) // want `os.OpenFile stays on \*os.File: it is in the package's exported API \(field File`
	if err != nil {
		return nil, err
	}
	return &Store{File: f}, nil
}

func internal(name string) (*os.File, error) {
	return os.Open(name) // want `os.Open can be diskio.Open`
}
