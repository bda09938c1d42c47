//go:build linux

// Command mixedio runs a few seconds of mixed disk I/O through diskio, for
// measuring what DISKIO_TRACE records of a real run:
//
//	DISKIO_TRACE=/tmp/run go run ./trace/internal/mixedio -d 7s -dir /tmp
//
// Readers do 4 KiB random reads of a page-cache file and of an O_DIRECT
// one; writers append 64 KiB blocks and sync every 16th; at the end it
// calls diskio.FlushTrace and prints the counts it did.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/diskio-go/diskio"
)

func main() {
	d := flag.Duration("d", 7*time.Second, "how long to run")
	dir := flag.String("dir", os.TempDir(), "where the files go (removed at the end)")
	readers := flag.Int("readers", 8, "goroutines reading each file")
	writers := flag.Int("writers", 2, "goroutines writing")
	size := flag.Int64("size", 256<<20, "bytes of each file read")
	flag.Parse()
	if err := run(*d, *dir, *readers, *writers, *size); err != nil {
		fmt.Fprintln(os.Stderr, "mixedio:", err)
		os.Exit(1)
	}
}

func run(d time.Duration, dir string, readers, writers int, size int64) error {
	tmp, err := os.MkdirTemp(dir, "mixedio-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	data := filepath.Join(tmp, "data")
	if err := fill(data, size); err != nil {
		return err
	}
	cached, err := diskio.OpenFile(data, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer cached.Close()
	direct, err := diskio.OpenFile(data, os.O_RDONLY, 0, diskio.WithDirect(diskio.Direct))
	if err != nil {
		return err
	}
	defer direct.Close()

	var ops [3]atomic.Int64 // cached reads, direct reads, writes
	var syncs atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	errc := make(chan error, 2*readers+writers)
	for i := range 2 * readers {
		f, k := cached, 0
		if i%2 == 1 {
			f, k = direct, 1
		}
		wg.Go(func() {
			b := make([]byte, 4096)
			for time.Now().Before(stop) {
				off := rand.Int64N(size/4096) * 4096
				if _, err := f.ReadAt(b, off); err != nil {
					errc <- err
					return
				}
				ops[k].Add(1)
			}
		})
	}
	for i := range writers {
		wg.Go(func() {
			f, err := diskio.Create(filepath.Join(tmp, fmt.Sprintf("log%d", i)))
			if err != nil {
				errc <- err
				return
			}
			defer f.Close()
			b := make([]byte, 64<<10)
			for n := 1; time.Now().Before(stop); n++ {
				if _, err := f.Write(b); err != nil {
					errc <- err
					return
				}
				ops[2].Add(1)
				if n%16 == 0 {
					if err := f.Sync(); err != nil {
						errc <- err
						return
					}
					syncs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	fmt.Printf("%v: %d page-cache reads, %d direct reads, %d writes, %d syncs\n",
		d, ops[0].Load(), ops[1].Load(), ops[2].Load(), syncs.Load())
	return diskio.FlushTrace()
}

// fill writes size bytes of random data to name.
func fill(name string, size int64) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	for off := int64(0); off < size; off += int64(len(b)) {
		if _, err := f.WriteAt(b, off); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
