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
	const off, n = 40960, 12288
	if _, err := f.WriteAt(make([]byte, n), off); err != nil {
		log.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, n), off); err != nil {
		log.Fatal(err)
	}
	// The recorder sees the whole process; pick this example's requests.
	for _, r := range rec.SnapshotSince(m).Requests {
		if r.Off == off && r.Len == n {
			fmt.Println(r.Op, r.Off, r.Len)
		}
	}
	// snap.WriteSummary(os.Stdout), snap.WriteFiles(prefix): see package trace.

	// Output:
	// write 40960 12288
	// read 40960 12288
}

// WithScheduler sends a File's I/O through a scheduler of your own (its
// backend, ring size, tracer) instead of the process-wide one.
func ExampleWithScheduler() {
	s, err := sched.New(sched.Options{Backend: sched.AIO})
	if err != nil {
		// No Linux AIO here (a seccomp profile refuses it, or the
		// kernel lacks it): the first backend there is.
		s, err = sched.New(sched.Options{Backend: sched.Auto})
	}
	if err != nil {
		log.Fatal(err)
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
	n, err := f.WriteString("through its own scheduler")
	fmt.Println(n, err)

	// Output:
	// 25 <nil>
}
