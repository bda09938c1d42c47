//go:build linux

package pebblevfs

import (
	"errors"
	"io"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/diskio-go/diskio"
)

// readAhead is the chunk a sequential reader reads at a time, and
// how far ahead it reads: Pebble's own readahead tops out at 256 KiB too.
const readAhead = 256 << 10

var errUnsupported = errors.New("pebblevfs: Read on a file opened for writing")

// seqFile is a direct file opened for sequential reading. Without the page
// cache there is no kernel read-ahead, so it does its own: ReadAt is served
// from an aligned 256 KiB chunk, and while the caller consumes it the next
// chunk is read in the background. Reads that leave the current or next
// chunk (a seek) start over there; reads of a chunk or more go straight
// to the file.
type seqFile struct {
	readFile

	mu    sync.Mutex
	cur   chunk
	next  *chunk // being read in the background, or nil
	spare []byte
}

type chunk struct {
	buf  []byte // aligned, len readAhead
	off  int64
	n    int // bytes read; n < readAhead at end of file
	err  error
	done chan struct{}
}

func newSeqFile(f *diskio.File, dev vfs.DeviceID) *seqFile {
	return &seqFile{readFile: readFile{f: f, dev: dev}, cur: chunk{off: -1}}
}

// ReadAt returns len(p) bytes at off, or fewer with io.EOF at end of file.
func (s *seqFile) ReadAt(p []byte, off int64) (int, error) {
	if len(p) >= readAhead || off < 0 {
		return s.f.ReadAt(p, off)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	done := 0
	for done < len(p) {
		at := off + int64(done)
		if s.cur.off < 0 || at < s.cur.off || at >= s.cur.off+int64(s.cur.n) {
			if err := s.load(at); err != nil {
				return done, err
			}
			if at >= s.cur.off+int64(s.cur.n) {
				return done, io.EOF
			}
		}
		done += copy(p[done:], s.cur.buf[at-s.cur.off:s.cur.n])
	}
	return done, nil
}

// load makes cur the chunk holding at: the one read ahead if it is, else
// a synchronous read; then it starts reading the chunk after it.
func (s *seqFile) load(at int64) error {
	start := at - at%readAhead
	if s.next != nil {
		<-s.next.done
		if s.next.off == start {
			s.spare, s.cur = s.cur.buf, *s.next
			s.next = nil
		} else {
			s.spare = s.next.buf
			s.next = nil
		}
	}
	if s.cur.off != start {
		buf := s.cur.buf
		if buf == nil {
			buf = alignedBuf(readAhead, unit)
		}
		n, err := readFull(s.f, buf, start)
		s.cur = chunk{buf: buf, off: start, n: n}
		if err != nil {
			s.cur.off = -1
			return err
		}
	}
	if s.cur.err != nil {
		err := s.cur.err
		s.cur.off = -1
		return err
	}
	if s.cur.n == readAhead {
		buf := s.spare
		if buf == nil {
			buf = alignedBuf(readAhead, unit)
		}
		s.spare = nil
		c := &chunk{buf: buf, off: start + readAhead, done: make(chan struct{})}
		s.next = c
		go func() {
			c.n, c.err = readFull(s.f, c.buf, c.off)
			close(c.done)
		}()
	}
	return nil
}

// Close waits for the read ahead before closing the file.
func (s *seqFile) Close() error {
	s.mu.Lock()
	if s.next != nil {
		<-s.next.done
		s.next = nil
	}
	s.mu.Unlock()
	return s.f.Close()
}
