//go:build linux

package diskio_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

// StartTracing records every request of the process-wide scheduler. It
// must come before the first file is opened; in a process that opened
// files already (as this example's test binary has), trace a scheduler of
// your own instead and open files WithScheduler.
func ExampleStartTracing() {
	rec, err := diskio.StartTracing(trace.Config{})
	var opts []diskio.Option
	if err != nil {
		rec = trace.New(trace.Config{})
		s, err := sched.New(sched.Options{Tracer: rec})
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()
		opts = append(opts, diskio.WithScheduler(s))
	}
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	f, err := diskio.OpenFile(filepath.Join(dir, "traced"), os.O_RDWR|os.O_CREATE, 0o644, opts...)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	m := rec.Mark()
	if _, err := f.WriteAt(make([]byte, 4096), 0); err != nil {
		log.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 4096), 0); err != nil {
		log.Fatal(err)
	}
	for _, r := range rec.SnapshotSince(m).Requests {
		if r.Fd == int32(f.Fd()) {
			fmt.Println(r.Op, r.Off, r.Len)
		}
	}
	// snap.WriteSummary(os.Stdout), snap.WriteFiles(prefix): see package trace.

	// Output:
	// write 0 4096
	// read 0 4096
}

// WithScheduler sends a File's I/O through a scheduler of your own (its
// backend, ring size, tracer) instead of the process-wide one.
func ExampleWithScheduler() {
	s, err := sched.New(sched.Options{Backend: sched.AIO})
	if err != nil {
		fmt.Println("no Linux AIO here:", err)
		return
	}
	defer s.Close()
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	f, err := diskio.OpenFile(filepath.Join(dir, "data"), os.O_RDWR|os.O_CREATE, 0o644, diskio.WithScheduler(s))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	n, err := f.WriteString("through Linux AIO")
	fmt.Println(n, err)

	// Output:
	// 17 <nil>
}
