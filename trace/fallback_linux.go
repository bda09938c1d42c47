//go:build linux

package trace

import (
	"sync"

	"github.com/diskio-go/diskio/sched"
)

// maxFallbacks bounds the fallbacks a Recorder keeps; more are counted.
const maxFallbacks = 64

// fallbacks keeps the first maxFallbacks reports. They are rare (one per
// scheduler and per file opened), so a mutex serves.
type fallbacks struct {
	mu   sync.Mutex
	list []sched.Fallback
	n    int // reports, kept or not
}

// Fallback keeps fb for the summary (sched.FallbackTracer): the
// scheduler's backend when it is not its first choice, and each file that
// asked for O_DIRECT and runs buffered. It records while paused too: a
// fallback happens once, usually before anyone captures.
func (r *Recorder) Fallback(fb sched.Fallback) {
	r.fallbacks.mu.Lock()
	defer r.fallbacks.mu.Unlock()
	r.fallbacks.n++
	if len(r.fallbacks.list) < maxFallbacks {
		r.fallbacks.list = append(r.fallbacks.list, fb)
	}
}

func (f *fallbacks) load() ([]sched.Fallback, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sched.Fallback(nil), f.list...), f.n
}
