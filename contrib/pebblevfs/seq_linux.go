//go:build linux

package pebblevfs

import (
	"errors"
	"io"
	"sync"

	"github.com/diskio-go/diskio"
)

// readAhead is the size of one read of a sequential reader: Pebble's own
// readahead tops out at 256 KiB too.
const readAhead = 256 << 10

// DefaultReadAhead is how many readAhead-sized reads a direct file opened
// for sequential reads keeps in flight when FS.ReadAhead is 0.
const DefaultReadAhead = 4

var errUnsupported = errors.New("pebblevfs: Read on a file opened for writing")

// seqFile is a direct file opened for sequential reading (compaction
// inputs; iterators past Pebble's readahead threshold). Without the page
// cache there is no kernel read-ahead, so it reads through a diskio
// StreamReader: depth reads of 256 KiB in flight, in the scheduler's
// registered memory, submitted together. ReadAt copies from the buffer the
// stream returned; a read behind it or past what is already in flight
// (a seek) starts a new stream there. Reads of 256 KiB or more go straight
// to the file.
type seqFile struct {
	readFile
	depth int

	mu     sync.Mutex
	sr     *diskio.StreamReader // nil until the first read, and after a seek's failure
	srOff  int64                // file offset of the next byte sr returns
	cur    *diskio.Buffer       // the buffer being copied from, or nil
	curOff int64                // file offset of cur.Bytes()[0]
}

func newSeqFile(r readFile, depth int) *seqFile {
	if depth <= 0 {
		depth = DefaultReadAhead
	}
	return &seqFile{readFile: r, depth: depth}
}

// ReadAt returns len(p) bytes at off, or fewer with io.EOF at end of file.
// What the fresh cache holds is copied from there and starts no stream.
func (s *seqFile) ReadAt(p []byte, off int64) (int, error) {
	n, fresh, ghost, err := readFresh(s.fresh, p, off, s.readAt)
	if ghost {
		fresh = n
	}
	s.cache.servedBytes(fresh)
	return n, err
}

func (s *seqFile) readAt(p []byte, off int64) (int, error) {
	if len(p) >= readAhead || off < 0 {
		return s.f.ReadAt(p, off)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	done := 0
	for done < len(p) {
		at := off + int64(done)
		if s.cur != nil && at >= s.curOff && at < s.curOff+int64(len(s.cur.Bytes())) {
			done += copy(p[done:], s.cur.Bytes()[at-s.curOff:])
			continue
		}
		if err := s.advance(at); err != nil {
			return done, err
		}
	}
	return done, nil
}

// advance makes cur a buffer that holds at, or returns io.EOF if the file
// ends before at.
func (s *seqFile) advance(at int64) error {
	s.release()
	// Already in flight (or next): read on. Else start over at at's block.
	if s.sr == nil || at < s.srOff || at >= s.srOff+int64(s.depth+1)*readAhead {
		if s.sr != nil {
			s.sr.Close()
			s.sr = nil
		}
		start := at - at%unit
		sr, err := s.f.NewStreamReader(start, diskio.StreamOptions{BufferSize: readAhead, ReadAhead: s.depth})
		if err != nil {
			return err
		}
		s.sr, s.srOff = sr, start
	}
	for {
		b, err := s.sr.NextBuffer()
		if err != nil {
			s.sr.Close()
			s.sr = nil
			return err // io.EOF at the end
		}
		off := s.srOff
		s.srOff += int64(len(b.Bytes()))
		if at < s.srOff {
			s.cur, s.curOff = b, off
			return nil
		}
		b.Release() // skipped over by a short seek forward
	}
}

func (s *seqFile) release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

// Close stops the read-ahead (waiting for the reads in flight) and closes
// the file.
func (s *seqFile) Close() error {
	s.mu.Lock()
	s.release()
	if s.sr != nil {
		s.sr.Close()
		s.sr = nil
	}
	s.mu.Unlock()
	return s.f.Close()
}

var _ io.ReaderAt = (*seqFile)(nil)
