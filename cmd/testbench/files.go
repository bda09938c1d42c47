//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/dio"
)

// files tracks the temporary files of a run, so that they are removed at
// the end, on an error, and on Ctrl-C (from the signal goroutine).
type files struct {
	mu    sync.Mutex
	paths []string
}

func (fl *files) create(dir, pattern string) (*os.File, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	fl.paths = append(fl.paths, f.Name())
	return f, nil
}

func (fl *files) remove(path string) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	os.Remove(path)
	for i, p := range fl.paths {
		if p == path {
			fl.paths = append(fl.paths[:i], fl.paths[i+1:]...)
			break
		}
	}
}

// removeAll removes every file still registered and returns their names.
func (fl *files) removeAll() []string {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	removed := fl.paths
	for _, p := range removed {
		os.Remove(p)
	}
	fl.paths = nil
	return removed
}

// checkSpace refuses to start when dir cannot hold need bytes, before a
// half-written file fills the disk.
func checkSpace(dir string, need int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	free := int64(st.Bavail) * st.Bsize
	if free < need {
		return fmt.Errorf("not enough free space in %s: the test files need %s, %s is available (use -dir elsewhere or a smaller -size)", dir, sizeName(roundMiB(need)), sizeName(roundMiB(free)))
	}
	return nil
}

func roundMiB(n int64) int64 { return (n + 1<<20 - 1) &^ (1<<20 - 1) }

// makeDataFile writes size bytes of pseudo-random data: never a fallocated
// or zero-filled file, whose unwritten extents read back without touching
// the disk (the fsync article's lesson about sysbench). The data is synced
// and dropped from the page cache.
func makeDataFile(fl *files, dir string, size int64, progress func(done, total int64)) (string, error) {
	f, err := fl.create(dir, "testbench-*.dat")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := bench.Fill(f, size, progress); err != nil {
		fl.remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// dropCache writes back and evicts the file's pages, so a buffered run
// starts cold.
func dropCache(path string) error { return bench.Evict(path) }

// warm reads [0, n) of the file through the page cache.
func warm(path string, n int64) error { return bench.Warm(path, n) }

// memAvailable is MemAvailable from /proc/meminfo, in bytes (0 if unknown).
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// directSupport says whether O_DIRECT works in dir, and if not, why, in
// the words the output uses.
func directSupport(dir string) (bool, string) {
	err := dio.Probe(dir)
	if err == nil {
		return true, ""
	}
	var u *dio.UnsupportedError
	if errors.As(err, &u) {
		return false, fmt.Sprintf("O_DIRECT is not supported in %s (%s): diskio falls back to buffered I/O there, so every run below is buffered (os.File too); use -dir on a disk filesystem (ext4, xfs, btrfs) to measure direct I/O", dir, u.FSType)
	}
	return false, fmt.Sprintf("O_DIRECT probe in %s failed: %v; every run below is buffered", dir, err)
}

// readAheadKB is the read_ahead_kb setting of the block device holding
// path, -1 if it cannot be found.
func readAheadKB(path string) int {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return -1
	}
	dev := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	for _, p := range []string{dev + "/queue/read_ahead_kb", dev + "/../queue/read_ahead_kb", filepath.Join(dev, "bdi", "read_ahead_kb")} {
		if b, err := os.ReadFile(p); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return n
			}
		}
	}
	return -1
}
