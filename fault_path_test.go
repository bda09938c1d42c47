//go:build linux

package diskio

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

// faultPath is one way a File's request runs, and how to make a File whose
// requests take it.
type faultPath struct {
	name    string
	path    sched.Path // where the injector must see the attempts
	backend sched.Backend
	opts    sched.Options
	mode    DirectMode
	sync    bool   // the path also runs syncs
	dir     string // where the file is: the test's temporary directory if ""
}

var faultPaths = []faultPath{
	// A cached file: reads are page-cache attempts, and a write of
	// whole cached pages is made on the caller's goroutine.
	{name: "page cache", path: sched.PathPageCache, backend: sched.URing, mode: PageCache},
	// One goroutine and an idle scheduler: the caller's thread (the
	// idle fast path), as os.File runs it; syncs run there anyway.
	{name: "caller's thread", path: sched.PathCaller, backend: sched.URing, mode: DirectRequired, sync: true},
	{name: "io_uring", path: sched.PathQueue, backend: sched.URing, opts: sched.Options{NoInline: true}, mode: DirectRequired, sync: true},
	{name: "Linux AIO", path: sched.PathQueue, backend: sched.AIO, opts: sched.Options{NoInline: true}, mode: DirectRequired, sync: true},
	{name: "blocking backend", path: sched.PathCaller, backend: sched.Blocking, mode: DirectRequired, sync: true},
	// A file on tmpfs, with O_DIRECT (Linux 6.6+): its data lives in
	// memory, and reads and writes are copied on the caller even when
	// the scheduler sends everything else to the ring (NoInline).
	{name: "file in memory", path: sched.PathCaller, backend: sched.URing, opts: sched.Options{NoInline: true}, mode: DirectRequired, dir: "/dev/shm"},
}

// pathFault is one fault, injected into the attempts of one operation on
// the path under test, with what the caller must get and what os.File
// gives for the same system-call result (internal/poll: EINTR retried,
// short reads and writes continued by ReadAt and WriteAt, any other errno
// returned in a *fs.PathError; fsync's error returned, and a later fsync
// asks the kernel again).
type pathFault struct {
	name   string
	op     sched.Op
	fault  func(a sched.Attempt) sched.Fault
	errno  syscall.Errno // what the caller gets; 0: success, every byte right
	osFile string
}

const faultBlock = 4096

func pathFaults() []pathFault {
	first := func(f sched.Fault) func(sched.Attempt) sched.Fault {
		return func(a sched.Attempt) sched.Fault {
			if a.Retry == 0 {
				return f
			}
			return sched.Fault{}
		}
	}
	always := func(f sched.Fault) func(sched.Attempt) sched.Fault {
		return func(sched.Attempt) sched.Fault { return f }
	}
	return []pathFault{
		{"EIO", sched.OpRead, first(sched.Fault{Errno: unix.EIO}), unix.EIO, "read: EIO"},
		{"EIO", sched.OpWrite, first(sched.Fault{Errno: unix.EIO}), unix.EIO, "write: EIO"},
		{"ENOSPC", sched.OpWrite, first(sched.Fault{Errno: unix.ENOSPC}), unix.ENOSPC, "write: ENOSPC"},
		{"EINTR", sched.OpRead, first(sched.Fault{Errno: unix.EINTR}), 0, "retried: success"},
		{"EINTR", sched.OpWrite, first(sched.Fault{Errno: unix.EINTR}), 0, "retried: success"},
		{"EAGAIN once", sched.OpRead, first(sched.Fault{Errno: unix.EAGAIN}), 0, "read: EAGAIN"},
		{"EAGAIN once", sched.OpWrite, first(sched.Fault{Errno: unix.EAGAIN}), 0, "write: EAGAIN"},
		{"EAGAIN always", sched.OpRead, always(sched.Fault{Errno: unix.EAGAIN}), unix.EAGAIN, "read: EAGAIN"},
		{"EAGAIN always", sched.OpWrite, always(sched.Fault{Errno: unix.EAGAIN}), unix.EAGAIN, "write: EAGAIN"},
		{"short", sched.OpRead, first(sched.Fault{Short: faultBlock}), 0, "continued: success"},
		{"short", sched.OpWrite, first(sched.Fault{Short: faultBlock}), 0, "continued: success"},
		{"delay 30ms", sched.OpRead, first(sched.Fault{Delay: 30 * time.Millisecond}), 0, "success, late"},
		{"delay 30ms", sched.OpWrite, first(sched.Fault{Delay: 30 * time.Millisecond}), 0, "success, late"},
		{"failed flush", sched.OpFsync, always(sched.Fault{Errno: unix.EIO}), unix.EIO, "sync: EIO; the next Sync: nil"},
		{"failed flush", sched.OpFdatasync, always(sched.Fault{Errno: unix.EIO}), unix.EIO, "(no Datasync)"},
	}
}

// TestFaultsOnEveryPath: each fault, injected on each path a File's
// request can take (the page cache on the caller's goroutine, the
// caller's thread, io_uring, Linux AIO, the blocking backend), reaches
// the caller as os.File gives it (a *fs.PathError with the op, the path
// and the bare errno; EINTR, short transfers and a passing EAGAIN
// invisible), nothing else is lost (the rest of the file reads back
// whole), and a failed flush stays failed for later Syncs. Each case
// checks that the injector saw its attempts on the path under test, so
// a path a request no longer takes fails here instead of going untested.
// Run with -v for the matrix.
func TestFaultsOnEveryPath(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	matrix := map[string]map[string]string{} // fault/op -> path -> result
	for _, p := range faultPaths {
		t.Run(p.name, func(t *testing.T) {
			for _, pf := range pathFaults() {
				if isFlush(pf.op) && !p.sync {
					continue
				}
				t.Run(pf.name+"/"+pf.op.String(), func(t *testing.T) {
					got := faultOnPath(t, p, pf)
					mu.Lock()
					key := fmt.Sprintf("%s, %s|%s", pf.name, pf.op, pf.osFile)
					if matrix[key] == nil {
						matrix[key] = map[string]string{}
					}
					matrix[key][p.name] = got
					mu.Unlock()
				})
			}
		})
	}
	if !testing.Verbose() {
		return
	}
	var b strings.Builder
	b.WriteString("\n| fault, op | os.File |")
	for _, p := range faultPaths {
		b.WriteString(" " + p.name + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(faultPaths)) + "\n")
	keys := make([]string, 0, len(matrix))
	for k := range matrix {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name, osFile, _ := strings.Cut(k, "|")
		fmt.Fprintf(&b, "| %s | %s |", name, osFile)
		for _, p := range faultPaths {
			r := matrix[k][p.name]
			if r == "" {
				r = "n/a"
			}
			b.WriteString(" " + r + " |")
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}

// faultOnPath runs one case and returns what the caller got, in short.
func faultOnPath(t *testing.T, p faultPath, pf pathFault) string {
	const blocks = 4
	dir := t.TempDir()
	if p.dir != "" {
		var st unix.Statfs_t
		if err := unix.Statfs(p.dir, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
			t.Skipf("%s is not a tmpfs (%v): the in-memory path needs one", p.dir, err)
		}
		var err error
		dir, err = os.MkdirTemp(p.dir, "diskio-fault-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	path := filepath.Join(dir, "f")
	content := randomBytes(blocks*faultBlock, 7)
	require.NoError(t, os.WriteFile(path, content, 0o644))

	var fd int32 = -1 // the File's I/O descriptor, set before the first call
	var mu sync.Mutex
	seen := map[sched.Path]int{}
	inj := sched.FaultFunc(func(a sched.Attempt) sched.Fault {
		mu.Lock()
		defer mu.Unlock()
		if a.Fd != fd || a.Op != pf.op {
			return sched.Fault{}
		}
		seen[a.Path]++
		if a.Path != p.path {
			return sched.Fault{}
		}
		return pf.fault(a)
	})
	opts := p.opts
	opts.Backend, opts.Faults = p.backend, inj
	s, err := sched.New(opts)
	if err != nil {
		testenv.Unavailable(t, string(p.backend), err)
	}
	defer s.Close()
	f, err := OpenFile(path, os.O_RDWR, 0, WithScheduler(s), WithDirect(p.mode))
	var unsupported *dio.UnsupportedError
	if p.dir != "" && errors.As(err, &unsupported) {
		t.Skipf("O_DIRECT on %s (tmpfs takes it since Linux 6.6): %v", p.dir, err)
	}
	require.NoError(t, err)
	defer f.Close()
	if p.path == sched.PathPageCache {
		// Cached: every page of the file is in the page cache.
		require.NoError(t, f.Advise(0, 0, AdviceWillNeed))
		_, err := f.ReadAt(make([]byte, len(content)), 0)
		require.NoError(t, err)
	}
	mu.Lock()
	fd = int32(f.dataFd)
	mu.Unlock()

	const at = faultBlock // the second block, of two
	want := append([]byte(nil), content...)
	var n int
	start := time.Now()
	switch pf.op {
	case sched.OpRead:
		buf := make([]byte, 2*faultBlock)
		n, err = f.ReadAt(buf, at)
		if err == nil {
			require.Equal(t, want[at:at+len(buf)], buf, "read back")
		}
	case sched.OpWrite:
		w := randomBytes(2*faultBlock, 9)
		n, err = f.WriteAt(w, at)
		if err == nil {
			copy(want[at:], w)
		} else {
			// What the failed write touched is undefined, as after
			// os.File's; the rest must be untouched.
			copy(want[at:], content[at:at+len(w)])
		}
	case sched.OpFsync:
		err = f.Sync()
	case sched.OpFdatasync:
		err = f.Datasync()
	}
	took := time.Since(start)

	mu.Lock()
	require.NotZero(t, seen[p.path], "no %v attempt on the path under test (%v): attempts by path %v", pf.op, p.path, seen)
	mu.Unlock()

	wantErrno := pf.errno
	if p.path == sched.PathPageCache && pf.errno == unix.EAGAIN {
		// On the page cache, EAGAIN is the kernel's "not cached":
		// the request goes on through the scheduler.
		wantErrno = 0
	}
	var got string
	if wantErrno == 0 {
		require.NoError(t, err)
		got = "success"
		if !isFlush(pf.op) {
			require.Equal(t, 2*faultBlock, n)
		}
		if pf.errno != 0 {
			got += " (through the scheduler)"
		}
		if strings.HasPrefix(pf.name, "delay") {
			require.GreaterOrEqual(t, took, 30*time.Millisecond, "the completion was held back")
			got += ", late"
		}
	} else {
		var pe *fs.PathError
		require.ErrorAs(t, err, &pe, "%v", err)
		require.Equal(t, map[sched.Op]string{sched.OpRead: "read", sched.OpWrite: "write", sched.OpFsync: "sync", sched.OpFdatasync: "datasync"}[pf.op], pe.Op)
		require.Equal(t, path, pe.Path)
		var errno syscall.Errno
		require.True(t, errors.As(pe.Err, &errno), "the PathError holds the bare errno, not %T", pe.Err)
		require.Equal(t, wantErrno, errno)
		if pf.op == sched.OpRead || pf.op == sched.OpWrite {
			var ioe *IOError
			require.ErrorAs(t, err, &ioe)
			require.Equal(t, int64(at), ioe.Off)
		}
		got = pe.Op + ": " + unixName(errno)
	}
	if isFlush(pf.op) {
		// A flush that failed stays failed (the kernel may have
		// marked the pages clean), while os.File's next fsync asks the
		// kernel again.
		err := f.Sync()
		require.ErrorIs(t, err, pf.errno, "a later Sync")
		got += "; the next Sync: " + unixName(pf.errno)
	}
	// Nothing else lost: the whole file reads back through another
	// descriptor.
	require.NoError(t, f.Close())
	back, err := os.ReadFile(path)
	require.NoError(t, err)
	if pf.op == sched.OpWrite && wantErrno != 0 {
		require.Equal(t, want[:at], back[:at], "before the failed write")
		require.Equal(t, want[at+2*faultBlock:], back[at+2*faultBlock:], "after the failed write")
	} else {
		require.True(t, bytes.Equal(want, back), "the file's bytes")
	}
	return got
}

func isFlush(op sched.Op) bool { return op == sched.OpFsync || op == sched.OpFdatasync }

func unixName(e syscall.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return e.Error()
}
