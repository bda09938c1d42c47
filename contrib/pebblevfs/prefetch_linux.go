//go:build linux

package pebblevfs

import (
	"sync"

	"github.com/diskio-go/diskio"
)

// prefetcher keeps the ranges Pebble asked to prefetch from direct files,
// read in the background into memory of its own, for the reads that
// follow. Pebble prefetches 64 to 256 KiB ahead of an iterator that reads
// blocks in order; readahead(2) would fill the page cache, which O_DIRECT
// reads do not look at. The slots are shared by all files of an FS and
// reused oldest first, so the memory is bounded (slots × 256 KiB).
type prefetcher struct {
	mu    sync.Mutex
	slots [prefetchSlots]*prefetched
	next  int
}

const (
	prefetchSlots = 32
	prefetchMax   = 256 << 10
)

// prefetched is one range; buf[:n] is valid once done is closed, and is
// never written again (a reused slot gets a new prefetched).
type prefetched struct {
	f    *diskio.File
	off  int64
	buf  []byte
	n    int
	err  error
	done chan struct{}
}

// start reads [off, off+n) of f in the background unless a slot holds it.
func (p *prefetcher) start(f *diskio.File, off, n int64) {
	if n <= 0 || off < 0 {
		return
	}
	start := off - off%unit
	end := min(alignUp(off+n), start+prefetchMax)
	p.mu.Lock()
	for _, s := range p.slots {
		if s != nil && s.f == f && s.off <= start && end <= s.off+int64(len(s.buf)) {
			p.mu.Unlock()
			return
		}
	}
	s := &prefetched{f: f, off: start, buf: alignedBuf(int(end-start), unit), done: make(chan struct{})}
	p.slots[p.next] = s
	p.next = (p.next + 1) % len(p.slots)
	p.mu.Unlock()
	go func() {
		s.n, s.err = readFull(f, s.buf, s.off)
		close(s.done)
	}()
}

// readAt copies [off, off+len(b)) from a prefetched range of f, waiting
// for it if it is still being read; ok is false if none holds it.
func (p *prefetcher) readAt(f *diskio.File, b []byte, off int64) (ok bool) {
	p.mu.Lock()
	var hit *prefetched
	for _, s := range p.slots {
		if s != nil && s.f == f && s.off <= off && off+int64(len(b)) <= s.off+int64(len(s.buf)) {
			hit = s
			break
		}
	}
	p.mu.Unlock()
	if hit == nil {
		return false
	}
	<-hit.done
	if hit.err != nil || off+int64(len(b)) > hit.off+int64(hit.n) {
		return false // the file's end, or an error: the caller reads itself
	}
	copy(b, hit.buf[off-hit.off:])
	return true
}

// forget drops the slots of f, which is closing: its ranges must not be
// served to a later file, and their memory can go.
func (p *prefetcher) forget(f *diskio.File) {
	p.mu.Lock()
	var pending []*prefetched
	for i, s := range p.slots {
		if s != nil && s.f == f {
			pending = append(pending, s)
			p.slots[i] = nil
		}
	}
	p.mu.Unlock()
	for _, s := range pending {
		<-s.done // the read holds the descriptor
	}
}
