package diskio_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/diskio-go/diskio"
)

// A file opened with PageCache uses the kernel's page cache, as os.File
// does: a read of cached data is a copy on the caller's goroutine, and
// only what is not cached goes through the scheduler.
func Example_pageCache() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.txt")
	if err := os.WriteFile(path, []byte("re-read often\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	f, err := diskio.OpenFile(path, os.O_RDONLY, 0, diskio.WithDirect(diskio.PageCache))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := f.Advise(0, 0, diskio.AdviceSequential); err != nil {
		log.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q direct=%v\n", b, f.Direct())
	// Output: "re-read often\n" direct=false
}
