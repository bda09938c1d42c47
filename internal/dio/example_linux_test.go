//go:build linux

package dio_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/diskio-go/diskio/internal/dio"
)

// Probe decides between direct and buffered I/O for a directory. Whether
// O_DIRECT works depends on the filesystem and kernel, so this example prints
// the decision only in a form that is the same everywhere.
func ExampleProbe() {
	dir, err := os.MkdirTemp("", "dio-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	open := dio.OpenDirect
	if err := dio.Probe(dir); errors.Is(err, dio.ErrUnsupported) {
		open = os.OpenFile // e.g. tmpfs before Linux 6.6: buffered I/O
	} else if err != nil {
		fmt.Println("probe failed:", err)
		return
	}
	f, err := open(dir+"/data", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	fmt.Println("opened")
	// Output: opened
}
