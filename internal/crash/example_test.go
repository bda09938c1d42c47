package crash_test

import (
	"context"
	"fmt"
	"os"

	"github.com/diskio-go/diskio/internal/crash"
)

// Run kills a child appender twice and checks the log each time. The
// test binary's TestMain calls crash.MaybeChild, which is what runs the
// child side.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "crash-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	rep, err := crash.Run(context.Background(), crash.Options{Dir: dir, Iterations: 2})
	fmt.Println(err, rep.Iterations, rep.Records >= rep.Acked)
	// Output: <nil> 2 true
}
