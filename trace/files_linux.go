//go:build linux

package trace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// File suffixes WriteFiles appends to its prefix.
const (
	SuffixWait     = ".wait.pb.gz"     // WaitProfile: go tool pprof -http=: prefix.wait.pb.gz
	SuffixSyscalls = ".syscalls.pb.gz" // SyscallProfile
	SuffixChrome   = ".trace.json"     // WriteChrome: open in ui.perfetto.dev
	SuffixJSONL    = ".jsonl"          // WriteJSONLines
	SuffixSummary  = ".txt"            // WriteSummary
)

// writtenFile is one file WriteFiles wrote, for the summary.
type writtenFile struct {
	name, what string
	size       int64
}

// WriteFiles writes every export of the snapshot next to each other:
// prefix+SuffixWait, SuffixSyscalls, SuffixChrome, SuffixJSONL and, last,
// SuffixSummary, whose Files section gives each file's name and size (its
// own included). Each file is written to a temporary name and renamed, so
// a reader never sees a half-written one (and a crash mid-write leaves
// the previous version).
func (s *Snapshot) WriteFiles(prefix string) error {
	var errs []error
	s.files = s.files[:0]
	for _, f := range []struct {
		suffix, what string
		write        func(io.Writer) error
	}{
		{SuffixWait, "I/O-wait profile: go tool pprof -http=: FILE", s.WriteWaitProfile},
		{SuffixSyscalls, "system-call profile (pprof)", s.WriteSyscallProfile},
		{SuffixChrome, "timeline: open in ui.perfetto.dev", s.WriteChrome},
		{SuffixJSONL, "timeline as JSON lines", s.WriteJSONLines},
	} {
		cw := &countingWriter{}
		err := writeAtomically(prefix+f.suffix, func(w io.Writer) error {
			cw.w = w
			return f.write(cw)
		})
		errs = append(errs, err)
		if err == nil {
			s.files = append(s.files, writtenFile{filepath.Base(prefix + f.suffix), strings.Replace(f.what, "FILE", filepath.Base(prefix+f.suffix), 1), cw.n})
		}
	}
	// The summary lists its own size: format it until the size it states
	// is its size (the number's digits are part of it).
	self := writtenFile{filepath.Base(prefix + SuffixSummary), "this summary", 0}
	s.files = append(s.files, self)
	var buf bytes.Buffer
	for range 4 {
		buf.Reset()
		if err := s.WriteSummary(&buf); err != nil {
			return errors.Join(append(errs, err)...)
		}
		if int64(buf.Len()) == s.files[len(s.files)-1].size {
			break
		}
		s.files[len(s.files)-1].size = int64(buf.Len())
	}
	errs = append(errs, writeAtomically(prefix+SuffixSummary, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	}))
	return errors.Join(errs...)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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
