//go:build linux

package diskio

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

// matrixScenarios are the conformance scenarios TestFilesystems runs on
// every filesystem: those of regular files, where the filesystem decides
// what a File does (its O_DIRECT, RWF_NOWAIT, poll). FIFOs, devices and
// directories are os.File's on every filesystem alike.
var matrixScenarios = []string{"copy-in", "copy-out", "copy-between", "bufio", "regular-misc", "kernel-error", "open", "closed"}

// TestFilesystems is the filesystem matrix: on each filesystem
// testenv.Mount makes (ext4, xfs and btrfs on loop devices, tmpfs,
// overlayfs over ext4, FUSE), a new mount each, it runs the conformance
// scenarios of regular files (matrixScenarios) on os.File and every File
// mode and requires the same transcripts, and reports what each mode got
// (modeReport). With DISKIO_FS_MATRIX_LONG=1 it runs every conformance
// scenario that applies there, and the extras (TestConformanceExtras).
func TestFilesystems(t *testing.T) {
	long := os.Getenv("DISKIO_FS_MATRIX_LONG") != ""
	var rows []string
	for _, fsys := range testenv.Filesystems {
		t.Run(string(fsys), func(t *testing.T) {
			mnt := testenv.Mount(t, fsys)
			newDir := func(t *testing.T) string {
				d, err := os.MkdirTemp(mnt, "t-")
				require.NoError(t, err)
				t.Cleanup(func() { os.RemoveAll(d) })
				return d
			}
			for _, mode := range []DirectMode{PageCache, Direct, DirectRequired} {
				rows = append(rows, modeReport(t, fsys, mode, newDir(t)))
			}
			names := matrixScenarios
			if long {
				names = nil
				for _, sc := range scenarios {
					names = append(names, sc.name)
				}
				if fsys != testenv.FUSE { // bindfs mounts nodev: a device node there does not open
					t.Run("extras", func(t *testing.T) { conformanceExtras(t, newDir) })
				}
			}
			for _, name := range names {
				switch {
				case name == "kernel-error" && (fsys == testenv.XFS || fsys == testenv.Btrfs):
					continue // its EFBIG is ext4's 16 TiB limit: xfs and btrfs take a write at 4 EiB
				case strings.HasSuffix(name, "-device") && fsys == testenv.FUSE:
					continue // nodev
				}
				i := slices.IndexFunc(scenarios, func(sc struct {
					name string
					run  func(t *testing.T, im impl, dir string, tr *transcript)
				}) bool {
					return sc.name == name
				})
				require.GreaterOrEqual(t, i, 0, "no scenario %q", name)
				regular := slices.Contains(matrixScenarios, name)
				t.Run(name, func(t *testing.T) { matrixScenario(t, fsys, regular, scenarios[i].run, newDir) })
			}
		})
	}
	if len(rows) > 0 {
		t.Logf("what each mode got:\n| filesystem | mode | opened | O_DIRECT | RWF_NOWAIT reads / writes | requests through io_uring: cold reads, hot reads, writes, syncs |\n|---|---|---|---|---|---|\n%s",
			strings.Join(rows, "\n"))
	}
}

// matrixScenario runs one scenario on os.File and each File mode, each in
// a new directory, and requires the same transcripts. On FUSE the oracle
// of a scenario of regular files (regular) is an os.File of a descriptor
// the runtime does not poll (osUnpolled):
// os.OpenFile polls a FUSE file, so its deadlines are taken there and make
// its later reads and writes fail with os.ErrDeadlineExceeded (though the
// kernel reports such a file always ready, so no read waits for them),
// where a File, like os.File on any other regular file, refuses them.
func matrixScenario(t *testing.T, fsys testenv.Filesystem, regular bool, run func(t *testing.T, im impl, dir string, tr *transcript), newDir func(*testing.T) string) {
	ims := impls
	if fsys == testenv.FUSE && regular {
		ims = append([]impl{osUnpolled}, impls[1:]...)
	}
	var got []*transcript
	for _, im := range ims {
		dir := newDir(t)
		tr := &transcript{dir: dir}
		run(t, im, dir, tr)
		got = append(got, tr)
	}
	for i := 1; i < len(got); i++ {
		require.Equal(t, got[0].lines, got[i].lines, "os (expected) against %s (actual)", ims[i].name)
	}
}

// osUnpolled is os.File on a descriptor opened with open(2) and given to
// os.NewFile, which, blocking, it does not register with the poller.
// Named "os", as the scenarios name the oracle.
var osUnpolled = impl{"os", func(n string, fl int, p fs.FileMode) (osLike, error) {
	fd, err := unix.Open(n, fl|unix.O_CLOEXEC, uint32(p.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: n, Err: err}
	}
	return os.NewFile(uintptr(fd), n), nil
}, (*os.File)(nil)}

// modeReport opens a File in dir in mode, with a scheduler of its own
// that sends every request through io_uring (NoInline), and reads a file
// written and evicted before, from 16 goroutines, cold then hot; then
// writes it from 16 goroutines and syncs it; it checks the bytes, and
// returns a row of the table of what the mode got: whether DirectRequired
// opened, O_DIRECT, RWF_NOWAIT, and the requests each phase sent to the
// scheduler, all through io_uring: those the File did not make on its
// caller's thread itself (a page-cache hit with RWF_NOWAIT, a raw system
// call where nothing can wait, as on tmpfs).
func modeReport(t *testing.T, fsys testenv.Filesystem, mode DirectMode, dir string) string {
	row := fmt.Sprintf("| %s | %s |", fsys, modeName(mode))
	data := randomBytes(256<<10+99, 3)
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	evict(t, path)
	var fb fallbacks
	s, err := sched.New(sched.Options{Backend: sched.URing, NoInline: true, OnFallback: fb.add})
	if err != nil {
		testenv.Unavailable(t, "uring", err)
	}
	defer s.Close()
	f, err := OpenFile(path, os.O_RDWR, 0, WithScheduler(s), WithDirect(mode))
	if mode == DirectRequired && err != nil {
		return row + " fails: " + err.Error() + " | | | |"
	}
	require.NoError(t, err)
	defer f.Close()
	require.False(t, f.plain(), "a regular file on %s is a plain *os.File", fsys)
	if mode == DirectRequired {
		require.True(t, f.Direct())
		require.NotZero(t, statusFlags(t, f.dataFd)&unix.O_DIRECT)
	}
	const chunk = 8192 + 7
	chunks := (len(data) + chunk - 1) / chunk
	read := func() {
		inParallel(chunks, func(i int) {
			b := make([]byte, chunk)
			n, err := f.ReadAt(b, int64(i*chunk))
			if err != io.EOF {
				require.NoError(t, err)
			}
			require.Equal(t, data[i*chunk:i*chunk+n], b[:n])
		})
	}
	var st [5]sched.Stats
	s.ReadStats(&st[0])
	read()
	s.ReadStats(&st[1])
	read()
	s.ReadStats(&st[2])
	data = randomBytes(len(data), 4)
	inParallel(chunks, func(i int) {
		_, err := f.WriteAt(data[i*chunk:min((i+1)*chunk, len(data))], int64(i*chunk))
		require.NoError(t, err)
	})
	s.ReadStats(&st[3])
	require.NoError(t, f.Sync())
	s.ReadStats(&st[4])
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, data, got)

	ns := f.nowait()
	yes := func(ok bool, why string) string {
		if ok {
			return "yes"
		}
		return "no (" + why + ")"
	}
	direct := "no"
	if f.Direct() {
		direct = fmt.Sprintf("yes, %d B", f.Alignment())
	}
	for _, x := range fb.get() {
		direct += " (" + x.Reason + ")"
	}
	return row + fmt.Sprintf(" yes | %s | %s / %s | %d, %d, %d, %d |", direct, yes(ns.Reads, ns.ReadsReason), yes(ns.Writes, ns.WritesReason),
		requests(&st[0], &st[1], sched.OpRead), requests(&st[1], &st[2], sched.OpRead), requests(&st[2], &st[3], sched.OpWrite),
		requests(&st[3], &st[4], sched.OpFsync, sched.OpFdatasync))
}

// evict drops the file's pages from the page cache (and, on FUSE, the
// kernel's pages of the FUSE file; its daemon's backing file keeps its own).
func evict(t *testing.T, path string) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Sync())
	rc, err := f.SyscallConn()
	require.NoError(t, err)
	var ferr error
	require.NoError(t, rc.Control(func(fd uintptr) { ferr = unix.Fadvise(int(fd), 0, 0, unix.FADV_DONTNEED) }))
	require.NoError(t, ferr)
}

// inParallel calls fn(0) to fn(n-1) from 16 goroutines, and returns when
// all are done.
func inParallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < n; i += 16 {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// requests counts the requests of ops completed between snapshots a
// and b.
func requests(a, b *sched.Stats, ops ...sched.Op) uint64 {
	var n uint64
	for _, op := range ops {
		x, y := a.Total(op), b.Total(op)
		n += y.Requests() - x.Requests()
	}
	return n
}
