//go:build linux

package diskioprom

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/diskio-go/diskio/sched"
)

// Collector collects a scheduler's metrics (see the package doc and the
// README's table). It is safe for concurrent use; concurrent scrapes
// take turns.
type Collector struct {
	s       *sched.Scheduler
	process bool

	mu sync.Mutex
	st sched.Stats // the snapshot, reused from scrape to scrape

	info, fallback                           *prometheus.Desc
	requests, bytes, errors                  *prometheus.Desc
	queue, device                            *prometheus.Desc
	inFlight, queued, inline, enters, sleeps *prometheus.Desc
	bound                                    *prometheus.Desc
	slowThreshold, slowRequests, slowDropped *prometheus.Desc
	stalled, oldestStall, longest            *prometheus.Desc
	fallbacks, places, placesInUse           *prometheus.Desc
	workers, workersMax, threads             *prometheus.Desc
	doublingLabels                           [sched.SlowDoublings]string
	doublingsFor                             time.Duration
}

// bounds are the histograms' bucket bounds in nanoseconds: two per power
// of two, 2^e and 1.5x2^e ns, from 8.192µs to 12.9s. Each is a bucket
// boundary of sched.Histogram, so the conversion is exact: a bucket
// counts exactly the durations under its bound.
var bounds = func() []int64 {
	var b []int64
	for e := 13; e <= 33; e++ {
		b = append(b, 1<<e, 3<<(e-1))
	}
	return b
}()

// boundSeconds are bounds in seconds, the buckets' le values.
var boundSeconds = func() []float64 {
	s := make([]float64, len(bounds))
	for i, b := range bounds {
		s[i] = float64(b) / 1e9
	}
	return s
}()

// bucketOf maps each sched.Histogram bucket to the first bound above its
// durations, len(bounds) for those above the last.
var bucketOf = func() [sched.HistogramBuckets]uint8 {
	var m [sched.HistogramBuckets]uint8
	j := 0
	for i := range m {
		top := int64(sched.BucketTop(i))
		for j < len(bounds) && top >= bounds[j] {
			j++
		}
		m[i] = uint8(j)
	}
	return m
}()

// New returns a Collector for s. With a nil s it collects nothing.
func New(s *sched.Scheduler, opts Options) *Collector {
	c := &Collector{s: s, process: !opts.NoProcess}
	l := opts.ConstLabels
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("diskio_"+name, help, labels, l)
	}
	c.info = d("scheduler_info", "The scheduler's kernel interface (backend label); always 1.", "backend")
	c.fallback = d("scheduler_fallback", "1 when the scheduler runs on a later backend than its first choice (Linux AIO, or blocking system calls), else 0.", "backend")
	c.requests = d("requests_total", "Requests completed, by operation and class.", "op", "class")
	c.bytes = d("bytes_total", "Bytes transferred by reads and writes.", "op", "class")
	c.errors = d("errors_total", "Requests that failed.", "op", "class")
	c.queue = d("queue_duration_seconds", "Time from the caller's hand-over to the first submission to the kernel (0 for requests run by their caller).", "op", "class")
	c.device = d("device_duration_seconds", "Time from the first submission to the final completion: the kernel's and the device's.", "op", "class")
	c.inFlight = d("in_flight_requests", "Requests in the kernel now.", "class")
	c.queued = d("queued_requests", "Requests the scheduler holds, waiting for a free slot or for the background bound.")
	c.inline = d("inline_requests_total", "Requests their caller ran itself with a system call (counted in requests_total too).")
	c.enters = d("kernel_enters_total", "The scheduler loop's system calls into the kernel queue.")
	c.sleeps = d("kernel_sleeps_total", "Of the kernel enters, those that waited for a completion.")
	c.bound = d("background_bound_requests", "How many background-class requests may be in flight while latency-class ones wait (0: classes off).")
	c.slowThreshold = d("slow_threshold_seconds", "The slow-request threshold (0: detection off).")
	c.slowRequests = d("slow_requests_total", "Requests that were in flight at least waited_seconds: the threshold and each doubling of it.", "waited_seconds")
	c.slowDropped = d("slow_reports_dropped_total", "Slow-request reports not delivered to OnSlow (it was still busy).")
	c.stalled = d("stalled_requests", "Requests in flight longer than the slow threshold now.")
	c.oldestStall = d("oldest_stall_age_seconds", "How long the oldest stalled request has been in flight now (0: none).")
	c.longest = d("slow_longest_wait_seconds", "The longest time a request had been in flight when last reported slow.")
	c.fallbacks = d("fallbacks_total", "Files that asked for O_DIRECT and run buffered.")
	c.places = d("caller_places", "Places where requests run on their callers' threads (inline: idle fast path and latency-class syncs; blocking: what io_uring would hand to a worker).", "kind")
	c.placesInUse = d("caller_places_in_use", "Of the caller places, those in use now (each an OS thread in a system call).", "kind")
	c.workers = d("iouring_workers", "io_uring worker threads (iou-wrk) of the process now.")
	c.workersMax = d("iouring_workers_max", "The cap on the scheduler's io_uring worker threads, bounded and unbounded together.")
	c.threads = d("os_threads", "OS threads of the process (/proc/self/status), io_uring workers included.")
	return c
}

// Describe sends the descriptions of every metric c collects.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	if c.s == nil {
		return
	}
	for _, d := range []*prometheus.Desc{
		c.info, c.fallback, c.requests, c.bytes, c.errors, c.queue, c.device,
		c.inFlight, c.queued, c.inline, c.enters, c.sleeps, c.bound,
		c.slowThreshold, c.slowRequests, c.slowDropped, c.stalled, c.oldestStall, c.longest,
		c.fallbacks, c.places, c.placesInUse, c.workersMax,
	} {
		ch <- d
	}
	if c.process {
		ch <- c.workers
		ch <- c.threads
	}
}

// Collect reads the scheduler's statistics and sends them as constant
// metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if c.s == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &c.st
	c.s.ReadStats(st)

	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	backend := string(st.Backend)
	gauge(c.info, 1, backend)
	fb := 0.0
	if c.s.FallbackReason() != "" {
		fb = 1
	}
	gauge(c.fallback, fb, backend)

	for op := range st.Ops {
		for cl := range st.Ops[op] {
			o := &st.Ops[op][cl]
			n := o.Requests()
			if n == 0 {
				continue
			}
			opName, className := sched.Op(op).String(), sched.Class(cl).String()
			counter(c.requests, n, opName, className)
			if sched.Op(op) == sched.OpRead || sched.Op(op) == sched.OpWrite {
				counter(c.bytes, o.Bytes, opName, className)
			}
			counter(c.errors, o.Errors, opName, className)
			ch <- histogram(c.queue, &o.Queue, opName, className)
			ch <- histogram(c.device, &o.Device, opName, className)
		}
	}
	for cl, n := range st.InFlight {
		gauge(c.inFlight, float64(n), sched.Class(cl).String())
	}
	gauge(c.queued, float64(st.Queued))
	counter(c.inline, st.Inline)
	counter(c.enters, st.Enters)
	counter(c.sleeps, st.Sleeps)
	gauge(c.bound, float64(st.BackgroundBound))

	sl := &st.Slow
	gauge(c.slowThreshold, sl.Threshold.Seconds())
	if sl.Threshold > 0 {
		if c.doublingsFor != sl.Threshold {
			for i := range c.doublingLabels {
				c.doublingLabels[i] = strconv.FormatFloat((sl.Threshold << i).Seconds(), 'g', -1, 64)
			}
			c.doublingsFor = sl.Threshold
		}
		for i, n := range sl.Doublings {
			counter(c.slowRequests, n, c.doublingLabels[i])
		}
	}
	counter(c.slowDropped, sl.Dropped)
	gauge(c.stalled, float64(sl.Stalled))
	gauge(c.oldestStall, sl.Oldest.Seconds())
	gauge(c.longest, sl.Longest.Seconds())

	counter(c.fallbacks, st.Fallbacks)
	gauge(c.places, float64(st.Places.Inline), "inline")
	gauge(c.places, float64(st.Places.Blocking), "blocking")
	gauge(c.placesInUse, float64(st.Places.InlineInUse), "inline")
	gauge(c.placesInUse, float64(st.Places.BlockingInUse), "blocking")
	if w := c.s.Fixed().Workers; w.Capped {
		gauge(c.workersMax, float64(w.Max.Bounded+w.Max.Unbounded))
	}
	if c.process {
		if n, ok := osThreads(); ok {
			gauge(c.threads, float64(n))
		}
		if n, ok := iouringWorkers(); ok {
			gauge(c.workers, float64(n))
		}
	}
}

// histogram converts h to a constant Prometheus histogram with the
// buckets of bounds.
func histogram(d *prometheus.Desc, h *sched.Histogram, labels ...string) prometheus.Metric {
	var counts [64]uint64 // len(bounds)+1
	var total uint64
	for i, n := range h.Counts {
		if n != 0 {
			counts[bucketOf[i]] += n
			total += n
		}
	}
	buckets := make(map[float64]uint64, len(bounds))
	var cum uint64
	for j, le := range boundSeconds {
		cum += counts[j]
		buckets[le] = cum
	}
	return prometheus.MustNewConstHistogram(d, total, h.Sum.Seconds(), buckets, labels...)
}
