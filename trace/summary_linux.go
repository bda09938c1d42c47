//go:build linux

package trace

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/diskio-go/diskio/sched"
)

// sizeClass rounds a request length up to a power of two, for grouping.
func sizeClass(n int) int {
	c := 1
	for c < n {
		c <<= 1
	}
	if n == 0 {
		return 0
	}
	return c
}

func sizeName(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// backendNotes say what a backend other than io_uring means for the I/O.
var backendNotes = map[sched.Backend]string{
	sched.AIO:      "Linux AIO is asynchronous only for O_DIRECT files: reads and writes of page-cache files that miss run synchronously inside io_submit, on the scheduler loop",
	sched.Blocking: "every request is a blocking system call on its caller's thread, as with os.File",
}

// WriteSummary writes a text summary. It states the window each part
// covers: the totals (requests per op and size class: count, latency
// percentiles from log-linear histograms with 6% resolution, the mean
// split of a request's time into queueing, kernel and wake-up; each
// system call's count and time, system calls per request, the mean batch
// per submitting call; the wait profile's stack samples) cover the whole
// span, Start to End; the timeline covers the records the ring kept. It
// says how many of each were dropped, the backends the requests ran on
// and the fallbacks reported, and, for a snapshot written by WriteFiles,
// each file and its size.
func (s *Snapshot) WriteSummary(w io.Writer) error {
	ew := &errWriter{w: w}
	var nreq, ncalls uint64
	for _, o := range s.Ops {
		nreq += o.Count
	}
	for _, c := range s.Calls {
		ncalls += c.Count
	}
	fmt.Fprintf(ew, "diskio trace: %d requests, %d system calls in %v (from the recorder's start or mark to this snapshot; totals, summary and profiles cover all of it)\n",
		nreq, ncalls, dur(time.Duration(s.End-s.Start)))
	s.writeBackends(ew)

	fmt.Fprintf(ew, "\nRequests (latency: enqueue to caller resumed; split: mean over requests through the loop)\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "op\tsize\tcount\terrors\tinline\tp50\tp90\tp99\tp99.9\tmax\tmean\tqueued\tkernel\twake-up\t\n")
	for i := range s.Ops {
		o := &s.Ops[i]
		q, kern, wk := "-", "-", "-"
		if loop := o.Count - o.Inline; loop > 0 {
			n := time.Duration(loop)
			q, kern, wk = dur(o.Queue/n), dur(o.Kernel/n), dur(o.Wake/n)
		}
		size := "-"
		if o.Size > 0 {
			size = sizeName(o.Size)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", o.Op, size, o.Count, o.Errors, o.Inline,
			dur(o.Latency(0.5)), dur(o.Latency(0.9)), dur(o.Latency(0.99)), dur(o.Latency(0.999)), dur(o.Max()),
			dur(o.Mean()), q, kern, wk)
	}
	tw.Flush()

	type callStats struct {
		n, waits, submitted, reaped uint64
		time                        time.Duration
	}
	calls := map[sched.Syscall]*callStats{}
	var callKeys []sched.Syscall
	for _, c := range s.Calls {
		cs := calls[c.Call]
		if cs == nil {
			cs = &callStats{}
			calls[c.Call] = cs
			callKeys = append(callKeys, c.Call)
		}
		cs.n += c.Count
		cs.time += c.Time
		cs.submitted += c.Submitted
		cs.reaped += c.Reaped
		if c.Wait {
			cs.waits += c.Count
		}
	}
	slices.Sort(callKeys)
	fmt.Fprintf(ew, "\nSystem calls (mean batch: requests submitted per call, over all calls of the kind)\n")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "call\tcount\tper request\ttotal\tmean\tslept\tsubmitted\tmean batch\treaped\t\n")
	perReq := float64(max(nreq, 1))
	for _, c := range callKeys {
		cs := calls[c]
		batch := "-"
		if cs.submitted > 0 {
			batch = fmt.Sprintf("%.1f", float64(cs.submitted)/float64(cs.n))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%s\t%d\t%d\t%s\t%d\t\n", c, cs.n, float64(cs.n)/perReq,
			dur(cs.time), dur(cs.time/time.Duration(cs.n)), cs.waits, cs.submitted, batch, cs.reaped)
	}
	tw.Flush()
	fmt.Fprintf(ew, "system calls per request: %.2f\n", float64(ncalls)/perReq)

	fmt.Fprintf(ew, "\nWhat each output covers\n")
	if s.StackEvery == 0 {
		fmt.Fprintf(ew, "  wait profile: no stacks sampled (StackEvery 0; DISKIO_TRACE_STACKS)\n")
	} else {
		kept := s.StackSamples - min(s.StacksDropped, s.StackSamples)
		fmt.Fprintf(ew, "  wait profile: the whole %v: %d stack samples (1 request in %d) in %d distinct stacks; %d samples dropped (new stacks once the table of %d stacks, %s, was full: DISKIO_TRACE_STACK_TABLE)\n",
			dur(time.Duration(s.End-s.Start)), kept, s.StackEvery, len(s.Stacks), s.StacksDropped, s.StackTable, memSize(s.StackTable*stackEntryBytes))
	}
	fmt.Fprintf(ew, "  system-call profile and this summary: the whole %v, nothing dropped\n", dur(time.Duration(s.End-s.Start)))
	held := len(s.Syscalls) + len(s.Requests)
	if first, last, ok := s.timeline(); ok {
		fmt.Fprintf(ew, "  timeline (Chrome trace, JSON lines): the last %v (%v to %v after the start): %d of %d records; %d dropped (ring of %d records, %s: DISKIO_TRACE_RECORDS)\n",
			dur(time.Duration(last-first)), dur(time.Duration(first-s.Start)), dur(time.Duration(last-s.Start)), held, s.Written, s.Dropped, s.RingRecords, memSize(s.RingRecords*64))
	} else {
		fmt.Fprintf(ew, "  timeline (Chrome trace, JSON lines): empty; %d records written, %d dropped (ring of %d records)\n", s.Written, s.Dropped, s.RingRecords)
	}
	if len(s.files) > 0 {
		fmt.Fprintf(ew, "\nFiles\n")
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		for _, f := range s.files {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.name, byteSize(f.size), f.what)
		}
		tw.Flush()
	}
	return ew.err
}

// writeBackends states the backends and the fallbacks reported.
func (s *Snapshot) writeBackends(ew io.Writer) {
	if len(s.Backends) > 0 {
		fmt.Fprintf(ew, "backend:")
		for _, b := range s.Backends {
			fmt.Fprintf(ew, " %s", b)
		}
		fmt.Fprintf(ew, "\n")
		for _, b := range s.Backends {
			if note := backendNotes[b]; note != "" {
				fmt.Fprintf(ew, "  %s: %s\n", b, note)
			}
		}
	}
	if s.FallbackCount == 0 {
		fmt.Fprintf(ew, "fallbacks: none reported\n")
		return
	}
	fmt.Fprintf(ew, "fallbacks: %d\n", s.FallbackCount)
	for _, fb := range s.Fallbacks {
		switch {
		case fb.Path == "":
			fmt.Fprintf(ew, "  scheduler on %s: %s\n", fb.Backend, fb.Reason)
		case fb.Plain:
			fmt.Fprintf(ew, "  a plain *os.File, not through the scheduler: %s: %s\n", fb.Path, fb.Reason)
		default:
			fmt.Fprintf(ew, "  buffered, not O_DIRECT: %s: %s\n", fb.Path, fb.Reason)
		}
	}
	if n := s.FallbackCount - len(s.Fallbacks); n > 0 {
		fmt.Fprintf(ew, "  and %d more\n", n)
	}
}

// memSize formats n bytes of memory.
func memSize(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (n+1023)>>10)
}

// byteSize formats a file size: exact, and in MB when large.
func byteSize(n int64) string {
	if n >= 1e6 {
		return fmt.Sprintf("%d bytes (%.1f MB)", n, float64(n)/1e6)
	}
	return fmt.Sprintf("%d bytes", n)
}

// timeline is the time from the first to the last event the timeline
// holds.
func (s *Snapshot) timeline() (first, last int64, ok bool) {
	first = -1
	for _, c := range s.Syscalls {
		if first < 0 || c.Start < first {
			first = c.Start
		}
		last = max(last, c.End)
	}
	for _, r := range s.Requests {
		if first < 0 || r.Enqueue < first {
			first = r.Enqueue
		}
		last = max(last, r.Resume)
	}
	return first, last, first >= 0
}

func dur(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d)
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}

// errWriter keeps the first write error, so the summary is written with
// plain Fprintf calls and checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
