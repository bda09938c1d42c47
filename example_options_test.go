package diskio_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// ReadFile and WriteFile are os.ReadFile and os.WriteFile on diskio.
func ExampleWriteFile() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "config.json")

	if err := diskio.WriteFile(name, []byte(`{"replicas": 3}`), 0o644); err != nil {
		log.Fatal(err)
	}
	data, err := diskio.ReadFile(name)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(data))
	// Output: {"replicas": 3}
}

// Open fails as os.Open does: a *fs.PathError with os.File's Op and errno.
func ExampleOpen() {
	_, err := diskio.Open("/nonexistent/file")
	fmt.Println(err)
	fmt.Println(os.IsNotExist(err))
	// Output:
	// open /nonexistent/file: no such file or directory
	// true
}

// An engine that caches its own blocks asks for O_DIRECT for one file...
func ExampleWithDirect() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Direct uses O_DIRECT where the filesystem allows it and the page
	// cache elsewhere; DirectRequired would fail there instead.
	f, err := diskio.OpenFile(filepath.Join(dir, "blocks"), os.O_RDWR|os.O_CREATE, 0o644,
		diskio.WithDirect(diskio.Direct))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	// Any offset, length and buffer still work: unaligned requests are
	// copied through aligned memory.
	if _, err := f.WriteAt([]byte("block"), 100); err != nil {
		log.Fatal(err)
	}
	b := make([]byte, 5)
	if _, err := f.ReadAt(b, 100); err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b))
	// Output: block
}

// ...or for every file it opens, once, at start-up.
func ExampleSetDefaultOptions() {
	diskio.SetDefaultOptions(diskio.WithDirect(diskio.Direct))
	defer diskio.SetDefaultOptions() // back to the package's defaults

	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	f, err := diskio.Create(filepath.Join(dir, "table.sst"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	// f uses O_DIRECT if the filesystem allows it (f.Direct() says).
	fmt.Println(f.Name() == filepath.Join(dir, "table.sst"))
	// Output: true
}

// A write-ahead log's I/O is Latency; a compaction's Background: while
// Latency requests wait, the scheduler bounds the Background ones in
// flight, so a commit does not queue behind a burst of reads.
func ExampleWithClass() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	wal, err := diskio.OpenFile(filepath.Join(dir, "wal"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644,
		diskio.WithClass(sched.Latency))
	if err != nil {
		log.Fatal(err)
	}
	defer wal.Close()
	if _, err := wal.Write([]byte("commit 1\n")); err != nil {
		log.Fatal(err)
	}
	if err := wal.Datasync(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("committed")
	// Output: committed
}
