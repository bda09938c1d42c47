package diskio_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/diskio-go/diskio"
)

// The README's example: open, write at an offset, make it durable, read
// it back, close, every error checked.
func Example_readme() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	f, err := diskio.OpenFile(filepath.Join(dir, "data.db"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		log.Fatal(err) // a *fs.PathError, as os.OpenFile's
	}
	// Any offset, any length, any buffer.
	if _, err := f.WriteAt([]byte("hello, disk"), 12345); err != nil {
		log.Fatal(err)
	}
	// Data and size durable; concurrent Syncs share one flush.
	if err := f.Sync(); err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := f.ReadAt(buf, 12345); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", buf)
	// Output: hello
}
