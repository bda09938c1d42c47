//go:build linux

package trace_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

func Example() {
	rec := trace.New(trace.Config{StackEvery: 1})
	s, err := sched.New(sched.Options{Tracer: rec})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "trace-example")
	defer os.RemoveAll(dir)
	f, _ := os.Create(filepath.Join(dir, "data"))
	defer f.Close()

	fd := int(f.Fd())
	s.WriteAt(fd, []byte("hello, tracer"), 0)
	s.Fdatasync(fd)
	s.ReadAt(fd, make([]byte, 5), 7)
	s.Close()

	snap := rec.Snapshot()
	for _, r := range snap.Requests {
		fmt.Println(r.Op, r.Off, r.Len, r.N, r.Errno)
	}
	fmt.Println("stacks:", len(snap.Stacks), "dropped:", snap.Dropped)
	// Everything else from the same snapshot:
	//	snap.WriteFiles("/tmp/run") // run.wait.pb.gz, run.trace.json, run.txt...
	//	snap.WriteSummary(os.Stdout)

	// Output:
	// write 0 13 13 errno 0
	// fdatasync 0 0 0 errno 0
	// read 7 5 5 errno 0
	// stacks: 3 dropped: 0
}
