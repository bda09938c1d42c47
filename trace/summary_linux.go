//go:build linux

package trace

import (
	"cmp"
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

type opSize struct {
	op   sched.Op
	size int
}

type opStats struct {
	latency             histogram
	queue, kernel, wake time.Duration // sums, over requests through the loop
	viaLoop, inline     int
	errors              int
	bytes               int64
}

// WriteSummary writes a text summary: per op and size class, the count,
// latency percentiles (enqueue to resume, from log-linear histograms with
// 6% resolution) and the mean split of a request's time into queueing,
// kernel and wake-up; then each system call's count and time, system
// calls per request, and the mean batch per submitting call.
func (s *Snapshot) WriteSummary(w io.Writer) error {
	ew := &errWriter{w: w}
	span := s.span()
	fmt.Fprintf(ew, "diskio trace: %d requests, %d system calls over %v; %d records written, %d dropped (ring full or overtaken)\n",
		len(s.Requests), len(s.Syscalls), span.Round(time.Microsecond), s.Written, s.Dropped)

	stats := map[opSize]*opStats{}
	for _, r := range s.Requests {
		k := opSize{r.Op, sizeClass(r.Len)}
		st := stats[k]
		if st == nil {
			st = &opStats{}
			stats[k] = st
		}
		st.latency.add(r.Latency())
		st.bytes += int64(r.N)
		if r.Errno != 0 {
			st.errors++
		}
		if r.Inline {
			st.inline++
			continue
		}
		st.viaLoop++
		st.queue += r.Queue()
		st.kernel += r.Kernel()
		st.wake += r.Wake()
	}
	keys := make([]opSize, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b opSize) int { return cmp.Or(cmp.Compare(a.op, b.op), cmp.Compare(a.size, b.size)) })

	fmt.Fprintf(ew, "\nRequests (latency: enqueue to caller resumed; split: mean over requests through the loop)\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "op\tsize\tcount\terrors\tinline\tp50\tp90\tp99\tp99.9\tmax\tmean\tqueued\tkernel\twake-up\t\n")
	for _, k := range keys {
		st := stats[k]
		h := &st.latency
		q, kern, wk := "-", "-", "-"
		if st.viaLoop > 0 {
			n := time.Duration(st.viaLoop)
			q, kern, wk = dur(st.queue/n), dur(st.kernel/n), dur(st.wake/n)
		}
		size := sizeName(k.size)
		if k.size == 0 {
			size = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", k.op, size, h.n, st.errors, st.inline,
			dur(h.quantile(0.5)), dur(h.quantile(0.9)), dur(h.quantile(0.99)), dur(h.quantile(0.999)), dur(time.Duration(h.max)),
			dur(h.mean()), q, kern, wk)
	}
	tw.Flush()

	type callStats struct {
		n, waits, submitted, reaped, submitting int
		time                                    time.Duration
	}
	calls := map[sched.Syscall]*callStats{}
	for _, c := range s.Syscalls {
		cs := calls[c.Call]
		if cs == nil {
			cs = &callStats{}
			calls[c.Call] = cs
		}
		cs.n++
		cs.time += c.Duration()
		cs.submitted += c.Submitted
		cs.reaped += c.Reaped
		if c.Wait {
			cs.waits++
		}
		if c.Submitted > 0 {
			cs.submitting++
		}
	}
	callKeys := make([]sched.Syscall, 0, len(calls))
	for c := range calls {
		callKeys = append(callKeys, c)
	}
	slices.Sort(callKeys)
	fmt.Fprintf(ew, "\nSystem calls\n")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "call\tcount\tper request\ttotal\tmean\tslept\tsubmitted\tmean batch\treaped\t\n")
	nreq := max(len(s.Requests), 1)
	for _, c := range callKeys {
		cs := calls[c]
		batch := "-"
		if cs.submitting > 0 {
			batch = fmt.Sprintf("%.1f", float64(cs.submitted)/float64(cs.submitting))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%s\t%d\t%d\t%s\t%d\t\n", c, cs.n, float64(cs.n)/float64(nreq),
			dur(cs.time), dur(cs.time/time.Duration(cs.n)), cs.waits, cs.submitted, batch, cs.reaped)
	}
	tw.Flush()
	fmt.Fprintf(ew, "system calls per request: %.2f\n", float64(len(s.Syscalls))/float64(nreq))
	return ew.err
}

// span is the time from the first to the last recorded event.
func (s *Snapshot) span() time.Duration {
	first, last := int64(-1), int64(0)
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
	if first < 0 {
		return 0
	}
	return time.Duration(last - first)
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
