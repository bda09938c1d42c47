//go:build linux

package pebblevfs_test

import (
	"fmt"
	"log"
	"os"

	"github.com/cockroachdb/pebble/v2"

	"github.com/diskio-go/diskio/contrib/pebblevfs"
)

// Pebble on diskio: sstables and WAL through diskio's scheduler (the
// default one here; diskio.WithScheduler chooses another, with a Tracer).
func Example() {
	dir, err := os.MkdirTemp("", "pebblevfs-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Direct mode: Pebble's block cache is the database's memory, and the
	// FS's cache of the tables it wrote last takes its share from it.
	cache := pebble.NewCache(64 << 20)
	defer cache.Unref()
	fs := pebblevfs.New().(*pebblevfs.FS)
	fs.Cache = cache

	db, err := pebble.Open(dir, &pebble.Options{FS: fs, Cache: cache, Logger: silent{}})
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Set([]byte("hello"), []byte("disk"), pebble.Sync); err != nil {
		log.Fatal(err)
	}
	if err := db.Flush(); err != nil { // writes an sstable
		log.Fatal(err)
	}
	v, closer, err := db.Get([]byte("hello"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("hello %s\n", v)
	closer.Close()
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	// Output: hello disk
}

type silent struct{}

func (silent) Infof(string, ...any)         {}
func (silent) Errorf(f string, args ...any) { log.Printf(f, args...) }
func (silent) Fatalf(f string, args ...any) { log.Fatalf(f, args...) }
