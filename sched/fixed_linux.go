//go:build linux

package sched

import (
	"errors"
	"fmt"

	"github.com/diskio-go/diskio/internal/mem"
)

// FixedStatus says whether registered buffers and files are in use, and
// if not, why (for example RLIMIT_MEMLOCK, or a backend without them).
type FixedStatus struct {
	Buffers       bool
	BuffersReason string
	Files         bool
	FilesReason   string
	// Unregistered counts AllocBuffer calls the registered arena could
	// not serve (it was full), whose memory is therefore not registered.
	Unregistered uint64
	// Workers is the cap on io_uring's worker threads.
	Workers WorkerStatus
}

func (f FixedStatus) String() string {
	str := func(ok bool, reason string) string {
		if ok {
			return "yes"
		}
		return "no (" + reason + ")"
	}
	buffers := str(f.Buffers, f.BuffersReason)
	if f.Buffers && f.Unregistered > 0 {
		buffers += fmt.Sprintf(", but %d AllocBuffer calls did not fit in the arena and got unregistered memory (Options.FixedBuffers)", f.Unregistered)
	}
	return "fixed buffers: " + buffers + "; fixed files: " + str(f.Files, f.FilesReason) + "; " + f.Workers.String()
}

// defaultArena is the registered arena's size when Options.FixedBuffers
// is zero: 16 MiB holds ReadMany's 2,500 4 KiB reads in flight (50
// goroutines x 50 ranges; 4 MiB left more than half of them in
// unregistered memory), or 32 buffers of 512 KiB. Registering pins it,
// which costs 16 MiB of memory and time in New; where RLIMIT_MEMLOCK refuses that
// (8 MiB is a common default for non-root users), 4 MiB is tried.
var defaultArena = [...]int{16 << 20, 4 << 20}

// setupFixed registers the fixed-buffer arena and the file table, on the
// loop's thread, and records why not when the kernel refuses.
func (s *Scheduler) setupFixed(q *uringQueue, opts Options) {
	switch {
	case opts.FixedBuffers < 0:
		s.fixed.BuffersReason = "disabled by Options.FixedBuffers"
	default:
		sizes := []int{opts.FixedBuffers}
		if opts.FixedBuffers == 0 {
			sizes = defaultArena[:]
		}
		var err error
		for _, size := range sizes {
			var a *arena
			if a, err = newArena(size); err == nil {
				if err = q.registerArena(a); err != nil {
					a.close()
				} else {
					s.arena, s.fixed.Buffers = a, true
					break
				}
			}
		}
		if !s.fixed.Buffers {
			s.fixed.BuffersReason = err.Error()
		}
	}
	switch {
	case opts.FixedFiles < 0:
		s.fixed.FilesReason = "disabled by Options.FixedFiles"
	default:
		if err := q.registerFileTable(opts.FixedFiles); err != nil {
			s.fixed.FilesReason = err.Error()
		} else {
			s.fixed.Files = true
		}
	}
}

// Fixed reports whether registered buffers and files are in use, and how
// many AllocBuffer calls fell back to unregistered memory so far.
func (s *Scheduler) Fixed() FixedStatus {
	st := s.fixed
	st.Unregistered = s.unregistered.Load()
	st.Workers = s.workers
	return st
}

// AllocBuffer returns n bytes of page-aligned memory for I/O (fit for
// O_DIRECT). With registered buffers it comes from the registered arena and
// requests that use it skip per-request page pinning; when the arena is
// exhausted or absent it is mapped separately, and works the same, only
// without that saving. Give it back with FreeBuffer.
//
// After Close it fails with ErrClosed. Memory handed out before Close stays
// valid until it is freed, after Close too: the arena is unmapped when the
// scheduler is closed and its last block is back.
func (s *Scheduler) AllocBuffer(n int) ([]byte, error) {
	if n <= 0 {
		return nil, fmt.Errorf("sched: AllocBuffer(%d): size must be positive", n)
	}
	// A caller inside keeps the loop, which closes the arena, from
	// exiting until the block is counted out.
	if !s.acquire() {
		return nil, ErrClosed
	}
	defer s.release()
	if s.arena != nil {
		b, err := s.arena.alloc(n)
		if err == nil {
			return b, nil
		}
		if err == errArenaClosed {
			return nil, ErrClosed
		}
		s.unregistered.Add(1) // reported by Fixed
	}
	return mem.Map(n)
}

// FreeBuffer returns memory from AllocBuffer (before or after Close). No
// request may still use it.
func (s *Scheduler) FreeBuffer(b []byte) error {
	if len(b) == 0 {
		return errors.New("sched: FreeBuffer of an empty slice")
	}
	if ours, err := s.arena.release(b); ours {
		return err
	}
	return mem.Unmap(b)
}
