//go:build linux

package diskio

import "sync"

// streamSet is a File's open StreamReaders. A StreamReader keeps reads in
// flight, each holding a reference on the File, until its reader consumes
// them; Close of the File, which waits for references, would wait for ever
// on a stream nobody reads any more (or one that was dropped). So Close
// ends the streams first: each waits for its reads in the kernel (they
// complete on their own), gives back its references and buffers, and
// fails later reads with fs.ErrClosed. The set holds the readers, so a
// dropped one is ended by Close rather than collected with reads pending.
type streamSet struct {
	mu    sync.Mutex
	m     map[*StreamReader]struct{}
	ended bool
}

func (s *streamSet) add(r *StreamReader) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		// The File closed before this stream began: its reads cannot
		// start (acquire fails), so it holds no references, and its
		// Read reports os.ErrClosed.
		return
	}
	if s.m == nil {
		s.m = make(map[*StreamReader]struct{})
	}
	s.m[r] = struct{}{}
}

func (s *streamSet) remove(r *StreamReader) {
	s.mu.Lock()
	delete(s.m, r)
	s.mu.Unlock()
}

// end closes every stream; later adds are closed at once.
func (s *streamSet) end() {
	s.mu.Lock()
	s.ended = true
	m := s.m
	s.m = nil
	s.mu.Unlock()
	for r := range m {
		r.mu.Lock()
		r.closeLocked()
		r.mu.Unlock()
	}
}
