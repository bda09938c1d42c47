// Package wal keeps its segment in a struct field, opened by a helper
// and written by another: every *os.File of the package moves.
package wal

import (
	"os"
	"path/filepath"
	"syscall"
)

type segment struct {
	path string
	f    *os.File
}

type log struct {
	dir  string
	tail *segment
	lock *os.File
}

func openSegment(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644) // want `os.OpenFile can be diskio.OpenFile: the file stays within what \*diskio.File serves \(the fix moves the package's 2 opens\)`
}

func writeAll(f *os.File, off int64, b []byte) error {
	_, err := f.WriteAt(b, off)
	return err
}

func open(dir string) (*log, error) {
	f, err := openSegment(filepath.Join(dir, "00001"))
	if err != nil {
		return nil, err
	}
	l := &log{dir: dir, tail: &segment{path: f.Name(), f: f}}
	var lock *os.File
	lock, err = os.Create(filepath.Join(dir, "LOCK")) // want `os.Create can be diskio.Create \(moved`
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	l.lock = lock
	return l, nil
}

func (l *log) append(off int64, b []byte) error {
	if err := writeAll(l.tail.f, off, b); err != nil {
		return err
	}
	return l.tail.f.Sync()
}

func (l *log) close() error {
	if l.lock != nil {
		l.lock.Close()
	}
	return l.tail.f.Close()
}
