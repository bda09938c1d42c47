package docscheck

// What the documents may quote that no Go file declares. A name is here
// only when it is not Go (a system call, a kernel function or file, a
// tool) or is another project's, which this repository does not hold.
// Kernel constants need no entry: a name in capitals (IORING_OP_READ,
// RWF_NOWAIT, EAGAIN, IORING_*) is taken as the kernel's, unless it is
// one of diskio's environment variables (DISKIO_...), which must be read
// somewhere in the code.

// kernelNames are system calls, kernel functions and the kernel's own
// words, as the man pages and the kernel's sources spell them.
var kernelNames = map[string]bool{
	// System calls (man section 2) and libc's names for them.
	"pread": true, "pread64": true, "preadv2": true, "pwrite": true, "pwritev2": true,
	"read": true, "write": true, "close": true, "open": true,
	"fsync": true, "fdatasync": true, "syncfs": true, "fstat": true, "fstatfs": true,
	"statx": true, "cachestat": true, "sysinfo": true, "lseek": true, "ftruncate": true,
	"fallocate": true, "copy_file_range": true, "posix_fadvise": true, "mmap": true,
	"io_uring_enter": true, "io_uring_setup": true, "io_uring_register": true,
	"io_submit": true, "io_getevents": true, "io_setup": true, "eventfd": true,
	// Kernel functions and fields named by profiles and the io_uring ABI.
	"import_iovec": true, "copy_iovec_from_user": true, "min_wait_usec": true,
	// The kernel's thread pool and its threads' names, an I/O scheduler
	// and its alternative, a sysctl.
	"io-wq": true, "iou-wrk": true, "mq-deadline": true, "none": true, "fs.aio-max-nr": true,
	// The Go runtime's unexported functions a profile shows.
	"closechan": true, "wakep": true,
	// Tools.
	"perf": true, "fio": true, "testify": true,
}

// foreignNames are other projects' names the documents compare with.
var foreignNames = map[string]bool{
	"storage.block_load.node_max_active": true, // a CockroachDB cluster setting
	"errorfs":                            true, // Pebble's fault-injecting vfs.FS
	"vfs.FS":                             true, // Pebble
	"vfs.Default":                        true, // Pebble
	"types.VFS":                          true, // hashicorp/raft-wal
}

// envNames are environment variables that are not diskio's.
var envNames = map[string]bool{"GOMAXPROCS": true, "CGO_ENABLED": true, "GODEBUG": true, "GOWORK": true}

// stdNames maps the package names the documents use as qualifiers to
// their standard-library import paths.
var stdNames = map[string]string{
	"os": "os", "io": "io", "fs": "io/fs", "runtime": "runtime", "debug": "runtime/debug",
	"signal": "os/signal", "errors": "errors", "syscall": "syscall", "sync": "sync",
	"atomic": "sync/atomic", "time": "time", "http": "net/http", "poll": "internal/poll",
	"bufio": "bufio", "testing": "testing", "flag": "flag", "filepath": "path/filepath",
}

// presetWords are the testbench's presets and sched's backend names,
// quoted as words: each must be a string literal in the directory given.
var presetWords = map[string]string{
	"dropin": "cmd/testbench", "slowdisk": "cmd/testbench", "wal": "cmd/testbench",
	"glommio": "cmd/testbench", "overhead": "cmd/testbench", "cache": "cmd/testbench",
	"blocking": "sched",
}
