//go:build linux

package trace

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// File suffixes WriteFiles appends to its prefix.
const (
	SuffixWait     = ".wait.pb.gz"     // WaitProfile: go tool pprof -http=: prefix.wait.pb.gz
	SuffixSyscalls = ".syscalls.pb.gz" // SyscallProfile
	SuffixChrome   = ".trace.json"     // WriteChrome: open in ui.perfetto.dev
	SuffixJSONL    = ".jsonl"          // WriteJSONLines
	SuffixSummary  = ".txt"            // WriteSummary
)

// WriteFiles writes every export of the snapshot next to each other:
// prefix+SuffixWait, SuffixSyscalls, SuffixChrome, SuffixJSONL and
// SuffixSummary. Each file is written to a temporary name and renamed, so
// a reader never sees a half-written one (and a crash mid-write leaves
// the previous version).
func (s *Snapshot) WriteFiles(prefix string) error {
	var errs []error
	for _, f := range []struct {
		suffix string
		write  func(io.Writer) error
	}{
		{SuffixWait, s.WriteWaitProfile},
		{SuffixSyscalls, s.WriteSyscallProfile},
		{SuffixChrome, s.WriteChrome},
		{SuffixJSONL, s.WriteJSONLines},
		{SuffixSummary, s.WriteSummary},
	} {
		errs = append(errs, writeAtomically(prefix+f.suffix, f.write))
	}
	return errors.Join(errs...)
}

func writeAtomically(name string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		if _, ok := err.(*os.PathError); ok {
			return err
		}
		if _, ok := err.(*os.LinkError); ok {
			return err
		}
		return &os.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}
