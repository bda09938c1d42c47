package bench

import (
	"runtime/metrics"
	"sync"
	"time"
)

// Usage is what a stretch of work cost the process.
type Usage struct {
	CPU         time.Duration // user + system time of the whole process
	Allocs      uint64        // heap objects allocated
	PeakThreads int           // most OS threads seen at once, io_uring's workers included (0 where unknown)
	PeakWorkers int           // most io_uring worker threads (iou-wrk) seen at once
	Elapsed     time.Duration // wall time
}

// Meter measures a stretch of work: call StartMeter before it and Stop
// after. A background goroutine samples the OS thread count every
// SampleEvery, and counts io_uring's worker threads again, at most every
// WorkersEvery, whenever the total changed; threads never exit in a Go
// program, so the peak is also the count at the end unless something else
// removed one (a runtime.LockOSThread goroutine exiting, or io_uring
// workers, which exit after a few idle seconds).
type Meter struct {
	start   time.Time
	cpu0    time.Duration
	allocs0 uint64
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	peak    int
	workers int // peak io_uring workers
}

// SampleEvery is the thread sampling interval: short enough to catch a
// burst of threads created by blocking calls (they stay anyway), cheap
// enough to be invisible (one small /proc read).
const SampleEvery = 5 * time.Millisecond

// WorkersEvery is the shortest interval between two counts of io_uring's
// workers: a count reads a file per thread (a process that ran os.File
// I/O has a hundred), and a worker lives as long as the request it runs
// plus a few idle seconds, so a slower pace misses none that matter.
const WorkersEvery = 25 * time.Millisecond

// StartMeter starts measuring.
func StartMeter() *Meter {
	// The workers are first counted by the sampler, not here: StartMeter
	// must be quick, work may be timed from before it.
	m := &Meter{stop: make(chan struct{}), done: make(chan struct{}), peak: Threads()}
	m.allocs0 = Allocs()
	m.cpu0 = CPUTime()
	m.start = time.Now()
	go m.sample()
	return m
}

func (m *Meter) sample() {
	defer close(m.done)
	t := time.NewTicker(SampleEvery)
	defer t.Stop()
	counted, at := -1, time.Time{} // the total when workers were last counted, and when
	for {
		n, w := Threads(), -1
		// A worker starting or exiting changes the total; counting
		// only then keeps a steady process's sampling to one read.
		if n != counted && time.Since(at) >= WorkersEvery {
			w, counted, at = IOWorkers(), n, time.Now()
		}
		m.mu.Lock()
		m.peak = max(m.peak, n)
		m.workers = max(m.workers, w)
		m.mu.Unlock()
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
	}
}

// Stop ends the measurement and returns what it saw. Call it once.
func (m *Meter) Stop() Usage {
	u := Usage{Elapsed: time.Since(m.start), CPU: CPUTime() - m.cpu0, Allocs: Allocs() - m.allocs0}
	close(m.stop)
	<-m.done
	n, w := Threads(), IOWorkers()
	m.mu.Lock()
	u.PeakThreads = max(m.peak, n)
	u.PeakWorkers = max(m.workers, w)
	m.mu.Unlock()
	return u
}

var allocSample = []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
var allocMu sync.Mutex

// Allocs returns the number of heap objects the process has allocated so
// far. It reads runtime/metrics, which unlike runtime.ReadMemStats does
// not stop the world.
func Allocs() uint64 {
	allocMu.Lock()
	defer allocMu.Unlock()
	metrics.Read(allocSample)
	if allocSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return allocSample[0].Value.Uint64()
}
