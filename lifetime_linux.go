//go:build linux

package diskio

import (
	"sync"
	"sync/atomic"
)

// lifetime counts a File's calls in progress and marks its Close, in the
// way of internal/poll's fdMutex: Close waits for the count to drain
// before it touches the descriptor, so in-flight I/O never meets a closed
// or reused descriptor number. Its zero value is open, with no call in.
type lifetime struct {
	refs  atomic.Int64 // calls in progress, with refClosed once Close began
	latch drainLatch   // Close waits on it when calls were in progress
}

const refClosed = 1 << 62

// A call counts itself in by adding 1 to refs (File.acquire, written out
// there so that it inlines: a page-cache hit pays for it), and is refused
// if refClosed is set; either way it counts itself out with release.

// release counts a call out; the last one out after Close lets it go on.
func (l *lifetime) release() {
	if l.refs.Add(-1) == refClosed {
		l.latch.open()
	}
}

// closed reports whether Close has begun.
func (l *lifetime) closed() bool { return l.refs.Load()&refClosed != 0 }

// close marks Close; it reports false if Close had already begun. The
// caller then waits for the calls in progress with drained.
func (l *lifetime) close() bool {
	for {
		old := l.refs.Load()
		if old&refClosed != 0 {
			return false
		}
		if l.refs.CompareAndSwap(old, old|refClosed) {
			if old == 0 {
				l.latch.open()
			}
			return true
		}
	}
}

// drained returns once no call is in progress after close.
func (l *lifetime) drained() { l.latch.wait() }

// drainLatch is what Close waits on while calls are in progress: a
// channel made only when Close has to wait, closed once.
type drainLatch struct {
	mu     sync.Mutex
	ch     chan struct{}
	opened bool
}

// open releases the waiter, now or when it comes; more calls do nothing.
func (l *drainLatch) open() {
	l.mu.Lock()
	if !l.opened {
		l.opened = true
		if l.ch != nil {
			close(l.ch)
		}
	}
	l.mu.Unlock()
}

// wait returns once open has been called.
func (l *drainLatch) wait() {
	l.mu.Lock()
	if l.opened {
		l.mu.Unlock()
		return
	}
	if l.ch == nil {
		l.ch = make(chan struct{})
	}
	ch := l.ch
	l.mu.Unlock()
	<-ch
}
