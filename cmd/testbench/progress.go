//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// progress draws one status line on stderr while a run is going, only
// when stderr is a terminal (never into a log file or a pipe).
type progress struct {
	w     io.Writer
	on    bool
	n     int    // runs started
	total int    // runs planned, 0 if unknown
	round string // "round 2/6", shown with each run
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		p.on = err == nil
	}
	return p
}

// start shows label with a bar filling over dur; the returned function
// clears the line.
func (p *progress) start(label string, dur time.Duration) func() {
	if p == nil || !p.on {
		return func() {}
	}
	p.n++
	stop, done := make(chan struct{}), make(chan struct{})
	t0 := time.Now()
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			frac := min(1, float64(time.Since(t0))/float64(dur))
			const width = 24
			bar := strings.Repeat("#", int(frac*width)) + strings.Repeat(".", width-int(frac*width))
			run := fmt.Sprintf("run %d", p.n)
			if p.total > 0 {
				run = fmt.Sprintf("run %d/%d", p.n, p.total)
			}
			if p.round != "" {
				run += ", " + p.round
			}
			fmt.Fprintf(p.w, "\r\033[K%s [%s] %s", run, bar, label)
			select {
			case <-stop:
				fmt.Fprint(p.w, "\r\033[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(stop); <-done }
}

// note prints a line of status (file creation, say) when on a terminal.
func (p *progress) note(format string, args ...any) {
	if p != nil && p.on {
		fmt.Fprintf(p.w, "\r\033[K"+format, args...)
	}
}
