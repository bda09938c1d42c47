//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/sched"
)

// presetWAL: what storage layers' logs do. One writer appends records of
// 100 B to 64 KiB and makes each durable (Sync, or Datasync) before the
// next, on a growing file, a preallocated one (size set with fallocate)
// and a recycled one (written and synced before, appended to from 0
// again: Pebble's trick); then 16 and 64 writers appending 4 KiB records
// with Datasync each, sharing flushes (group commit). diskio's File
// against os.File (buffered write + fsync/fdatasync, the baseline) and,
// with -fio, for one writer fio (--rw=write --fdatasync=1 or --fsync=1,
// psync, at the same sizes; its latency is the write's alone, fio reports
// the sync apart). Each record size is a set of rows run side by side in
// runAll's rounds (the measurement is walRun, a custom run: custom.go).
// The note says the reads the appends cost (medians): read requests per
// append from diskio's tracer, and bytes per append the process read from
// the disk (/proc/self/io read_bytes: the kernel's read-on-write of a
// partial page counts too). -bs replaces the single writer's record
// sizes; the log is -size, at most 128 MiB.
func presetWAL(ctx context.Context, s *suite) error {
	sizes := []int{100, 1 << 10, 4 << 10, 16 << 10, 64 << 10}
	if s.c.bsSet {
		sizes = s.c.bss
	}
	kinds := []string{"growing", "preallocated", "recycled"}
	dir, err := os.MkdirTemp(s.e.dir, "testbench-wal-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The log file: appends stop at its end.
	capBytes := min(128<<20, s.e.size)
	job := func(group, be, kind string, size, writers int, fsync string) Job {
		j := Job{Group: group, Label: be, Backend: be, RW: "append", BS: size, G: writers, Direct: be == "diskio",
			Fsync: fsync, Limit: capBytes, Custom: "wal", Variant: kind, Dir: dir}
		if fsync == "fsync" {
			j.Label += " Sync"
		} else {
			j.Label += " Datasync"
		}
		return j
	}
	s.note(fmt.Sprintf("wal: records of random data appended to a %s log; each append waits for its Sync/Datasync; recycled: the file was written with O_DIRECT and synced before, so neither side has it in the page cache; read/append: bytes the process read from the disk (/proc/self/io), reads/append: diskio's read requests", sizeName(capBytes)))
	var jobs []Job
	for _, kind := range kinds {
		for _, full := range []bool{true, false} {
			sync, fsync := "Datasync", "each"
			if full {
				sync, fsync = "Sync", "fsync"
			}
			for _, size := range sizes {
				group := fmt.Sprintf("wal: 1 writer, %s file, %s records, %s after each append", kind, sizeName(int64(size)), sync)
				for _, be := range []string{"diskio", "os.File"} {
					jobs = append(jobs, job(group, be, kind, size, 1, fsync))
				}
			}
		}
	}
	for _, kind := range []string{"preallocated", "recycled"} {
		group := fmt.Sprintf("wal: group commit, 4 KiB records, %s file, Datasync after each", kind)
		for _, g := range []int{16, 64} {
			for _, be := range []string{"diskio", "os.File"} {
				jobs = append(jobs, job(group, be, kind, 4<<10, g, "group"))
			}
		}
	}
	return s.runAll(ctx, jobs)
}

// walCustom is the wal preset's measurement (custom.go): Variant is the
// file kind, Fsync "fsync" (Sync after each append), "each" (Datasync) or
// "group" (Datasync shared by G writers), Limit the log's size.
var walCustom = &customRun{
	run: walRun,
	fioLabel: func(j Job) string {
		if j.G != 1 {
			return "" // fio's jobs would not share one log
		}
		if j.Fsync == "fsync" {
			return "fio psync write+fsync"
		}
		return "fio psync write+fdatasync"
	},
	fio: walFio,
	note: func(r Result) string {
		if r.Backend == "diskio" {
			return fmt.Sprintf("reads/append %.3f, %.0f B read/append", r.ReadReqsPerOp, r.ReadBytesPerOp)
		}
		return fmt.Sprintf("%.0f B read/append", r.ReadBytesPerOp)
	},
}

// walLog is the file under test, through either backend.
type walLog interface {
	WriteAt(p []byte, off int64) (int, error)
	flush(full bool) error
	Close() error
}

type osLog struct{ *os.File }

func (l osLog) flush(full bool) error {
	if full {
		return l.Sync()
	}
	for {
		if err := unix.Fdatasync(int(l.Fd())); err != unix.EINTR {
			return err
		}
	}
}

type diskioLog struct{ *diskio.File }

func (l diskioLog) flush(full bool) error {
	if full {
		return l.Sync()
	}
	return l.Datasync()
}

// walReads counts read requests for the tracer column, and the
// scheduler's system calls.
type walReads struct{ n, sys atomic.Int64 }

func (c *walReads) SyscallDone(sched.SyscallEvent) { c.sys.Add(1) }
func (c *walReads) RequestDone(ev sched.RequestEvent) {
	if ev.Op == sched.OpRead {
		c.n.Add(1)
	}
}

// walPrepare makes the log file of kind at name: empty, preallocated, or
// written (O_DIRECT, zeros) and synced. A recycled file is made once and
// used again: every run leaves it written.
func walPrepare(name, kind string, size int64) error {
	name += "-" + kind
	if kind == "recycled" {
		if st, err := os.Stat(name); err == nil && st.Size() == size {
			return nil
		}
	}
	os.Remove(name)
	switch kind {
	case "growing":
		return os.WriteFile(name, nil, 0o644)
	case "preallocated":
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.Fallocate(int(f.Fd()), 0, 0, size)
	}
	f, err := diskio.Create(name)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		if _, err := f.WriteAt(buf, off); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// walRun appends j.BS-byte records from j.G writers for j.Duration (or
// until the log is full), each made durable before the writer's next.
func walRun(ctx context.Context, _ *env, j Job, r *Result, h *bench.Histogram) error {
	full := j.Fsync == "fsync"
	name := filepath.Join(j.Dir, "log-"+j.Backend)
	if err := walPrepare(name, j.Variant, j.Limit); err != nil {
		return err
	}
	name += "-" + j.Variant
	reads := &walReads{}
	var l walLog
	if j.Backend == "diskio" {
		s, err := sched.New(sched.Options{Tracer: reads})
		if err != nil {
			return err
		}
		defer s.Close()
		f, err := diskio.OpenFile(name, os.O_RDWR, 0, diskio.WithScheduler(s), diskio.WithDirect(diskio.Direct))
		if err != nil {
			return err
		}
		r.Direct = f.Direct()
		l = diskioLog{f}
	} else {
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		l = osLog{f}
	}
	defer l.Close()
	rec := make([]byte, j.BS)
	rng := bench.NewRand(uint64(j.BS))
	for i := range rec {
		rec[i] = byte(rng.Next())
	}
	var next, ops atomic.Int64
	var failed atomic.Value
	read0 := procReadBytes()
	m := bench.StartMeter()
	deadline := time.Now().Add(j.Duration)
	var wg sync.WaitGroup
	for range j.G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// At least one append each, however short the round.
			for first := true; first || ctx.Err() == nil && time.Now().Before(deadline); first = false {
				off := next.Add(int64(j.BS)) - int64(j.BS)
				if off+int64(j.BS) > j.Limit {
					return
				}
				t0 := time.Now()
				if _, err := l.WriteAt(rec, off); err != nil {
					failed.Store(err)
					return
				}
				if err := l.flush(full); err != nil {
					failed.Store(err)
					return
				}
				h.Record(time.Since(t0))
				ops.Add(1)
			}
		}()
	}
	wg.Wait()
	u := m.Stop()
	readBytes := procReadBytes() - read0
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	n := ops.Load()
	if n == 0 {
		return errors.New("no appends completed")
	}
	r.measured(n, n*int64(j.BS), u, h)
	r.ReadBytesPerOp = float64(readBytes) / float64(n)
	// The scheduler's system calls (the File's statx calls and the edge
	// writes it makes on the caller's thread are not counted); os.File
	// makes two per append.
	if j.Backend == "diskio" {
		r.ReadReqsPerOp = float64(reads.n.Load()) / float64(n)
		r.SyscallsPerOp = float64(reads.sys.Load()) / float64(n)
	} else {
		r.SyscallsPerOp = 2
	}
	return nil
}

// procReadBytes is this process's read_bytes from /proc/self/io: bytes
// it caused to be read from storage.
func procReadBytes() int64 { return procIO("read_bytes") }

// walFio is fio's row: --rw=write with --fdatasync=1 (or --fsync=1),
// buffered psync, on a log of the same kind.
func walFio(ctx context.Context, _ *env, j Job) (Result, error) {
	bin, err := exec.LookPath("fio")
	if err != nil {
		return Result{}, errors.New("fio is not installed (apt-get install fio)")
	}
	name := filepath.Join(j.Dir, "log-fio")
	if err := walPrepare(name, j.Variant, j.Limit); err != nil {
		return Result{}, err
	}
	name += "-" + j.Variant
	sync := "--fdatasync=1"
	if j.Fsync == "fsync" {
		sync = "--fsync=1"
	}
	args := []string{"--name=wal", "--filename=" + name, "--size=" + strconv.FormatInt(j.Limit, 10), "--rw=write",
		"--bs=" + strconv.Itoa(j.BS), "--ioengine=psync", sync, "--fallocate=none",
		"--runtime=" + strconv.FormatInt(max(1, j.Duration.Milliseconds()), 10) + "ms",
		"--lat_percentiles=1", "--output-format=json"}
	return runFio(ctx, bin, args)
}
