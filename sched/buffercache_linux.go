//go:build linux

package sched

import (
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"
)

// The scheduler's buffer cache: memory from AllocBuffer that callers gave
// back with PutBuffer, kept per power-of-two size class for the next
// GetBuffer, so that reads and bounce buffers in steady state take no
// system call (mmap, munmap) and no block from the arena's lock. It is the
// Scheduler's: Close frees what it holds, and memory put back after Close
// is freed at once, so a closed scheduler keeps nothing.

// maxCachedBytes bounds the memory the cache keeps: enough for thousands
// of 4 KiB reads outstanding (ReadMany from 50 goroutines x 50 ranges
// holds 2,500) without a system call per read. What goes beyond is freed.
const maxCachedBytes = 64 << 20

// bufClasses is the number of size classes: 4 KiB << 0 to 4 KiB << 31.
const bufClasses = 32

type bufferCache struct {
	mu     sync.Mutex
	free   [bufClasses][][]byte
	bytes  int  // in the free lists
	closed bool // Close has emptied the cache: PutBuffer frees
	allocs atomic.Uint64
}

// readBuffers reads the buffer cache's counters into dst.
func (s *Scheduler) readBuffers(dst *BufferStats) {
	s.cache.mu.Lock()
	dst.Allocs, dst.Cached = s.cache.allocs.Load(), s.cache.bytes
	s.cache.mu.Unlock()
	dst.Arena = 0
	if s.arena != nil {
		dst.Arena = s.arena.size()
	}
}

// classUp is the smallest size class holding n bytes: 4 KiB << classUp.
func classUp(n int) int {
	if n <= minBlock {
		return 0
	}
	return bits.Len(uint((n - 1) / minBlock))
}

// classDown is the largest size class a buffer of capacity n holds.
func classDown(n int) int { return bits.Len(uint(n/minBlock)) - 1 }

var errBufferSize = errors.New("sched: GetBuffer: size must be positive")

// GetBuffer returns page-aligned memory for I/O of n bytes, as
// AllocBuffer, from the scheduler's cache when it holds a buffer of the
// size class (a power of two of at least 4 KiB): len n, and the class as
// its capacity, which the caller may use whole. Cached memory is not
// zeroed. Give it back once with PutBuffer (or FreeBuffer): unlike
// FreeBuffer, PutBuffer cannot tell a buffer given back twice. After
// Close it fails with ErrClosed.
func (s *Scheduler) GetBuffer(n int) ([]byte, error) {
	if n <= 0 {
		return nil, errBufferSize
	}
	c := classUp(n)
	if c >= bufClasses {
		return nil, errBufferSize
	}
	s.cache.mu.Lock()
	if s.cache.closed {
		s.cache.mu.Unlock()
		return nil, ErrClosed
	}
	if l := s.cache.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		s.cache.free[c] = l[:len(l)-1]
		s.cache.bytes -= cap(b)
		s.cache.mu.Unlock()
		return b[:n], nil
	}
	s.cache.mu.Unlock()
	s.cache.allocs.Add(1)
	b, err := s.AllocBuffer(minBlock << c)
	if err != nil {
		return nil, err
	}
	return b[:n], nil
}

// PutBuffer gives back memory from GetBuffer (or AllocBuffer), of any
// length up to its capacity, for reuse; once the cache is full, or the
// scheduler closed, it is freed (FreeBuffer). No request may still use it.
func (s *Scheduler) PutBuffer(b []byte) {
	b = b[:cap(b)]
	if len(b) < minBlock {
		s.FreeBuffer(b)
		return
	}
	c := classDown(len(b))
	s.cache.mu.Lock()
	if !s.cache.closed && c < bufClasses && s.cache.bytes+len(b) <= maxCachedBytes {
		s.cache.free[c] = append(s.cache.free[c], b)
		s.cache.bytes += len(b)
		s.cache.mu.Unlock()
		return
	}
	s.cache.mu.Unlock()
	s.FreeBuffer(b)
}

// closeCache frees what the cache holds and makes later PutBuffers free.
func (s *Scheduler) closeCache() {
	s.cache.mu.Lock()
	s.cache.closed = true
	lists := s.cache.free
	s.cache.free = [bufClasses][][]byte{}
	s.cache.bytes = 0
	s.cache.mu.Unlock()
	for _, l := range lists {
		for _, b := range l {
			s.FreeBuffer(b)
		}
	}
}
