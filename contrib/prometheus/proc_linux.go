//go:build linux

package diskioprom

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/sys"
)

// osThreads returns the process's OS threads, from /proc/self/status.
func osThreads() (int, bool) {
	var buf [4096]byte
	b, ok := readSmall("/proc/self/status", buf[:])
	if !ok {
		return 0, false
	}
	_, rest, ok := bytes.Cut(b, []byte("\nThreads:"))
	if !ok {
		return 0, false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	return n, err == nil
}

// iouringWorkers counts the process's io_uring worker threads: the
// threads named iou-wrk-<tid of the submitting thread>. It reads one
// small /proc file per thread.
func iouringWorkers() (int, bool) {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return 0, false
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, false
	}
	n := 0
	var comm [32]byte
	for _, tid := range names {
		if b, ok := readSmall("/proc/self/task/"+tid+"/comm", comm[:]); ok && bytes.HasPrefix(b, []byte("iou-wrk-")) {
			n++
		}
	}
	return n, true
}

// readSmall reads a small file into buf, without allocating.
func readSmall(path string, buf []byte) ([]byte, bool) {
	fd, err := sys.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, false
	}
	defer sys.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := sys.Read(fd, buf[n:])
		if err != nil {
			return nil, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], true
}
