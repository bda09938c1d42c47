//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// fileReport says what a file in dir gets: whether the Go runtime polls
// os.File's descriptor (FUSE: diskio takes it off the poller), whether a
// diskio File asking for O_DIRECT got it, and the fallbacks its scheduler
// reported.
func fileReport(w io.Writer, dir string) {
	osf, err := os.CreateTemp(dir, ".diskio-info-")
	if err != nil {
		fmt.Fprintf(w, "files in %s: %v\n", dir, err)
		return
	}
	name := osf.Name()
	defer os.Remove(name)
	polled := osf.SetReadDeadline(time.Time{}) == nil
	osf.Close()
	var mu sync.Mutex
	var fbs []string
	s, err := sched.New(sched.Options{OnFallback: func(fb sched.Fallback) {
		mu.Lock()
		fbs = append(fbs, fb.String())
		mu.Unlock()
	}})
	if err != nil {
		fmt.Fprintf(w, "files in %s: no scheduler: %v\n", dir, err)
		return
	}
	defer s.Close()
	f, err := diskio.OpenFile(name, os.O_RDWR, 0, diskio.WithScheduler(s), diskio.WithDirect(diskio.Direct))
	if err != nil {
		fmt.Fprintf(w, "files in %s: %v\n", dir, err)
		return
	}
	direct := f.Direct()
	f.Close()
	fmt.Fprintf(w, "files in %s: os.File's descriptor polled by the Go runtime: %v; WithDirect(Direct) gets O_DIRECT: %v\n", dir, polled, direct)
	mu.Lock()
	defer mu.Unlock()
	if len(fbs) > 0 {
		fmt.Fprintf(w, "  fallbacks: %s\n", strings.Join(fbs, "; "))
	}
}
