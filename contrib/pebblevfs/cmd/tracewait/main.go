// Command tracewait reads a Go execution trace (runtime/trace; cmd/ycsb
// -exectrace writes one per phase) and says where goroutines waited and
// what held the process's threads:
//
//	tracewait threads TRACE          each OS thread (M) as it first appears, and the goroutines then in a system or cgo call
//	tracewait states -match S TRACE  for goroutines whose stacks contain S: time in each state, by the stack that entered it
//	tracewait wakes -match S TRACE   for goroutines woken from a wait at a stack containing S: how long they stayed runnable,
//	                                 and for the long ones, what was next made runnable on the waker's P
//
// It is how contrib/pebblevfs/docs/2026-11-27-threads-and-scans.md found
// what a synced insert waits for and what holds the threads at a phase's
// peak.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	match := fs.String("match", "", "substring of a goroutine's stack (states, wakes)")
	depth := fs.Int("depth", 4, "stack frames shown")
	long := fs.Duration("long", time.Millisecond, "wakes: a runnable time counted as long")
	_ = fs.Parse(os.Args[2:])
	if fs.NArg() != 1 {
		usage()
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fatal(err)
	}
	defer f.Close()
	switch cmd {
	case "threads":
		err = threads(f, os.Stdout, *depth)
	case "states":
		err = states(f, os.Stdout, *match, *depth)
	case "wakes":
		err = wakes(f, os.Stdout, *match, *depth, *long)
	default:
		usage()
	}
	if err != nil {
		fatal(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: tracewait threads|states|wakes [-match S] [-depth N] [-long D] TRACE")
	os.Exit(2)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "tracewait:", err)
	os.Exit(1)
}

// frames is st's innermost n function names, package paths trimmed.
func frames(st trace.Stack, n int) string {
	var fs []string
	for f := range st.Frames() {
		fn := f.Func
		if i := strings.LastIndex(fn, "/"); i >= 0 {
			fn = fn[i+1:]
		}
		fs = append(fs, fn)
		if len(fs) == n {
			break
		}
	}
	return strings.Join(fs, " < ")
}

// goroutineStack is the stack of the goroutine a transition is about: its
// own, where the trace records it, else the event's (the goroutine's when
// it made the transition itself).
func goroutineStack(ev *trace.Event, st trace.StateTransition, n int) string {
	if s := frames(st.Stack, n); s != "" {
		return s
	}
	if ev.Goroutine() == st.Resource.Goroutine() {
		return frames(ev.Stack(), n)
	}
	return ""
}

// each calls fn for every goroutine state transition in the trace.
func each(r io.Reader, fn func(ev *trace.Event, st trace.StateTransition, g trace.GoID, from, to trace.GoState), other func(ev *trace.Event)) error {
	tr, err := trace.NewReader(r)
	if err != nil {
		return err
	}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if other != nil {
			other(&ev)
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		from, to := st.Goroutine()
		fn(&ev, st, st.Resource.Goroutine(), from, to)
	}
}

// threads prints each M as it first appears in the trace, with the
// goroutines in a system call (or cgo call) at that moment.
func threads(r io.Reader, w io.Writer, depth int) error {
	seen := map[trace.ThreadID]bool{}
	insys := map[trace.GoID]string{}
	var t0 trace.Time
	return each(r, func(ev *trace.Event, st trace.StateTransition, g trace.GoID, _, to trace.GoState) {
		if to == trace.GoSyscall {
			insys[g] = frames(ev.Stack(), depth)
		} else {
			delete(insys, g)
		}
	}, func(ev *trace.Event) {
		if t0 == 0 {
			t0 = ev.Time()
		}
		th := ev.Thread()
		if th == trace.NoThread || seen[th] {
			return
		}
		seen[th] = true
		var ss []string
		for _, s := range insys {
			ss = append(ss, s)
		}
		sort.Strings(ss)
		fmt.Fprintf(w, "%8.3fs  thread %d (%d seen), %d goroutines in system calls:\n", ev.Time().Sub(t0).Seconds(), th, len(seen), len(ss))
		for _, s := range ss {
			fmt.Fprintf(w, "    %s\n", s)
		}
	})
}

// spans collects durations by key and prints them, longest total first.
type spans map[string][]time.Duration

func (s spans) print(w io.Writer, top int) {
	type row struct {
		key string
		tot time.Duration
		ds  []time.Duration
	}
	var rows []row
	for k, ds := range s {
		var tot time.Duration
		for _, d := range ds {
			tot += d
		}
		slices.Sort(ds)
		rows = append(rows, row{k, tot, ds})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].tot > rows[j].tot })
	for i, r := range rows {
		if i == top {
			break
		}
		n := len(r.ds)
		fmt.Fprintf(w, "%10.1f ms %8d  p50 %9.3f ms  p99 %9.3f ms  %s\n", ms(r.tot), n, ms(r.ds[n/2]), ms(r.ds[n*99/100]), r.key)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// states prints, for the goroutines whose stack ever contains match, the
// time spent in each state, keyed by the stack that entered it (for a
// runnable spell, the state and stack before it).
func states(r io.Reader, w io.Writer, match string, depth int) error {
	type cur struct {
		state trace.GoState
		since trace.Time
		key   string
	}
	gs := map[trace.GoID]*cur{}
	marked := map[trace.GoID]bool{}
	out := spans{}
	err := each(r, func(ev *trace.Event, st trace.StateTransition, g trace.GoID, _, to trace.GoState) {
		if match == "" || strings.Contains(goroutineStack(ev, st, 64), match) {
			marked[g] = true
		}
		old := gs[g]
		if old != nil && marked[g] {
			k := fmt.Sprintf("%-9v %s", old.state, old.key)
			out[k] = append(out[k], ev.Time().Sub(old.since))
		}
		key := goroutineStack(ev, st, depth)
		switch {
		case to == trace.GoRunning:
			key = ""
		case to == trace.GoRunnable && old != nil:
			key = "after " + old.state.String() + ": " + old.key
		}
		gs[g] = &cur{to, ev.Time(), key}
	}, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d goroutines whose stacks contain %q\n", len(marked), match)
	out.print(w, 40)
	return nil
}

// wakes prints how long the goroutines woken from a wait at a stack
// containing match stayed runnable, and for those runnable at least long,
// which goroutine was next made runnable on the waker's P (a wake-up
// there takes the P's runnext slot, and sends the one in it to the tail
// of the P's run queue).
func wakes(r io.Reader, w io.Writer, match string, depth int, long time.Duration) error {
	type woken struct {
		at    trace.Time
		p     trace.ProcID
		waker string
		next  string
		after time.Duration
	}
	waitAt := map[trace.GoID]string{}
	pend := map[trace.GoID]*woken{}
	runnable := spans{}
	nextOf := spans{}
	var all, slow int
	err := each(r, func(ev *trace.Event, st trace.StateTransition, g trace.GoID, from, to trace.GoState) {
		if to == trace.GoWaiting {
			waitAt[g] = goroutineStack(ev, st, 64)
		}
		if from == trace.GoWaiting && to == trace.GoRunnable {
			for og, p := range pend {
				if og != g && p.p == ev.Proc() && p.next == "" {
					p.next = frames(ev.Stack(), depth)
					p.after = ev.Time().Sub(p.at)
				}
			}
			if strings.Contains(waitAt[g], match) {
				pend[g] = &woken{at: ev.Time(), p: ev.Proc(), waker: frames(ev.Stack(), depth)}
			}
		}
		if to == trace.GoRunning {
			if p := pend[g]; p != nil {
				delete(pend, g)
				all++
				d := ev.Time().Sub(p.at)
				runnable["woken by "+p.waker] = append(runnable["woken by "+p.waker], d)
				if d >= long {
					slow++
					if p.next == "" {
						p.next = "(nothing)"
					}
					nextOf[p.next] = append(nextOf[p.next], p.after)
				}
			}
		}
	}, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d wake-ups from a wait at %q; %d (%.1f%%) runnable for %v or longer\n", all, match, slow, 100*float64(slow)/float64(max(all, 1)), long)
	fmt.Fprintln(w, "runnable time, by waker:")
	runnable.print(w, 10)
	fmt.Fprintf(w, "the long ones: the next goroutine made runnable on the waker's P (times: how long after the wake-up):\n")
	nextOf.print(w, 10)
	return nil
}
