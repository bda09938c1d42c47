package diskio_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/diskio-go/diskio"
)

// NextBuffer scans a file without a copy; ReadMany reads scattered ranges
// together and returns each without a copy too. Every Buffer is released
// once its bytes are used.
func ExampleStreamReader_NextBuffer() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "records")
	if err := os.WriteFile(path, []byte("alpha...bravo...charlie."), 0o600); err != nil {
		log.Fatal(err)
	}
	f, err := diskio.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	bufs, err := f.ReadMany([]diskio.Range{{Off: 16, Len: 7}, {Off: 0, Len: 5}, {Off: 8, Len: 5}}, diskio.ReadManyOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for i, b := range bufs {
		if i > 0 {
			fmt.Print(" ")
		}
		fmt.Printf("%s", b.Bytes())
		b.Release()
	}
	fmt.Println()

	r, err := f.NewStreamReader(0, diskio.StreamOptions{BufferSize: 4096, ReadAhead: 4})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var n int
	for {
		b, err := r.NextBuffer()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		n += len(b.Bytes())
		b.Release()
	}
	fmt.Println(n, "bytes scanned")
	// Output:
	// charlie alpha bravo
	// 24 bytes scanned
}
