package diskio_test

import (
	"fmt"
	"log"
	"os"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

// The scheduler and tracing API exists on every system, so a program
// using it builds for darwin and windows too (CI builds this example
// there): sched.New fails with errors.ErrUnsupported off Linux, and Files
// do their I/O through os.File.
func ExampleTracing() {
	rec, err := diskio.StartTracing(trace.Config{Records: 1 << 12})
	if err != nil {
		// Files were opened before: the process-wide scheduler runs
		// untraced. Trace a scheduler of one's own instead.
		rec = trace.New(trace.Config{Records: 1 << 12})
	}
	var opts []diskio.Option
	if s, err := sched.New(sched.Options{Tracer: rec}); err == nil {
		defer s.Close()
		opts = append(opts, diskio.WithScheduler(s))
	}
	f, err := diskio.CreateTemp("", "traced-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	g, err := diskio.OpenFile(f.Name(), os.O_RDWR, 0, opts...)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	if _, err := g.WriteString("traced on Linux, plain os.File elsewhere"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("process-wide recorder:", diskio.Tracing() != nil)
}
