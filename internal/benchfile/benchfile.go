//go:build linux

// Package benchfile provides the data file that read benchmarks share: real,
// pseudo-random bytes written through the page cache, flushed to the device
// and dropped from the cache, so that direct reads measure the disk and a
// fallocated-but-unwritten file (which reads as zeros without I/O) can never
// flatter a result.
package benchfile

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/diskio-go/diskio/internal/bench"
)

// DefaultSize is the size of the shared file unless DISKIO_BENCH_SIZE (bytes,
// or with a K/M/G suffix) says otherwise.
const DefaultSize = 1 << 30

var (
	mu    sync.Mutex
	files = map[int64]string{}
)

// Size returns the benchmark file size from DISKIO_BENCH_SIZE or DefaultSize.
func Size() int64 {
	s := os.Getenv("DISKIO_BENCH_SIZE")
	if s == "" {
		return DefaultSize
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'k', 'K':
		mult, s = 1<<10, s[:len(s)-1]
	case 'm', 'M':
		mult, s = 1<<20, s[:len(s)-1]
	case 'g', 'G':
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		panic(fmt.Sprintf("DISKIO_BENCH_SIZE=%q: want a positive size like 2G", os.Getenv("DISKIO_BENCH_SIZE")))
	}
	return n * mult
}

// Shared returns the path of a file of size bytes, created on first use in
// DISKIO_BENCH_DIR (default: the system temporary directory) and reused by
// every benchmark of the process. Call Remove from TestMain.
//
// DISKIO_BENCH_FILE names an existing file of real data to use instead (at
// least size bytes; it is never removed): writing a 2 GiB file in every
// benchmark process takes time, and the blocking writes create OS threads
// that would then count in the benchmark's thread peak.
func Shared(tb testing.TB, size int64) string {
	tb.Helper()
	if p := os.Getenv("DISKIO_BENCH_FILE"); p != "" {
		st, err := os.Stat(p)
		if err != nil {
			tb.Fatalf("DISKIO_BENCH_FILE: %v", err)
		}
		if st.Size() < size {
			tb.Fatalf("DISKIO_BENCH_FILE %s has %d bytes, the benchmark needs %d", p, st.Size(), size)
		}
		return p
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := files[size]; ok {
		return p
	}
	dir := os.Getenv("DISKIO_BENCH_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("diskio-bench-%d-*.dat", size))
	if err != nil {
		tb.Fatal(err)
	}
	files[size] = f.Name()
	if err := bench.Fill(f, size, nil); err != nil {
		f.Close()
		tb.Fatalf("creating benchmark file: %v", err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return f.Name()
}

// Remove deletes every file Shared created.
func Remove() {
	mu.Lock()
	defer mu.Unlock()
	for size, p := range files {
		os.Remove(p)
		delete(files, size)
	}
}
