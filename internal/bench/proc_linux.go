//go:build linux

package bench

import (
	"bytes"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Threads returns the number of OS threads of the process, from the
// Threads: line of /proc/self/status (io_uring's kernel workers,
// iou-wrk-* and iou-sqp-*, are threads of the process too and count). It
// returns 0 if /proc cannot be read.
func Threads() int {
	var buf [4096]byte
	b, ok := readProc("/proc/self/status", buf[:])
	if !ok {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte("\nThreads:"))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil {
		return 0
	}
	return n
}

// IOWorkers returns how many of the process's threads are io_uring
// workers (io-wq, named iou-wrk-<tid of the submitting thread>), which run
// what io_uring cannot complete without blocking: fsync, fallocate,
// writes that extend a file, buffered writes. It reads one small /proc
// file per thread.
func IOWorkers() int {
	n := 0
	var comm [32]byte
	for _, tid := range Tasks() {
		b, ok := readProc("/proc/self/task/"+tid+"/comm", comm[:])
		if ok && bytes.HasPrefix(b, []byte("iou-wrk-")) {
			n++
		}
	}
	return n
}

// Tasks lists the thread ids of the process (/proc/self/task).
func Tasks() []string { return tasksIn("/proc/self/task") }

// ThreadsOf counts the OS threads of another process, and how many of
// them are io_uring workers, from outside: a child that is killed
// (internal/crash's) reports nothing itself. It returns zeros once the
// process is gone.
func ThreadsOf(pid int) (threads, workers int) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	var comm [32]byte
	for _, tid := range tasksIn(dir) {
		threads++
		if b, ok := readProc(dir+tid+"/comm", comm[:]); ok && bytes.HasPrefix(b, []byte("iou-wrk-")) {
			workers++
		}
	}
	return threads, workers
}

func tasksIn(dir string) []string {
	fd, ok := openProc(dir, unix.O_DIRECTORY)
	if !ok {
		return nil
	}
	defer unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	var names []string
	var buf [4096]byte
	for {
		n, _, errno := unix.RawSyscall(unix.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if errno != 0 || n == 0 {
			return names
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// readProc and openProc read /proc with raw system calls, which the Go
// runtime does not see: a sampler whose read is descheduled past
// sysmon's 20µs in an ordinary system call has its P handed to another
// thread, started for the purpose if none is idle, so the measurement
// would add a thread to what it measures. A /proc read never waits for
// anything but the CPU.
func readProc(path string, buf []byte) ([]byte, bool) {
	fd, ok := openProc(path, 0)
	if !ok {
		return nil, false
	}
	defer unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	got := 0
	for got < len(buf) {
		n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[got])), uintptr(len(buf)-got))
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return nil, false
		}
		if n == 0 {
			break
		}
		got += int(n)
	}
	return buf[:got], true
}

func openProc(path string, flags int) (int, bool) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return -1, false
	}
	dirfd := unix.AT_FDCWD
	for {
		fd, _, errno := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags|unix.O_RDONLY|unix.O_CLOEXEC), 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		return int(fd), errno == 0
	}
}

// CPUTime returns the user plus system CPU time the process has used
// (getrusage RUSAGE_SELF), all threads included.
func CPUTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
