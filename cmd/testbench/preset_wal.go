//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
// against os.File (buffered write + fsync/fdatasync) and, with -fio, fio
// (--rw=write --fdatasync=1, psync, at the same sizes). The note says the reads the
// appends cost: read requests per append from diskio's tracer, and
// bytes per append the process read from the disk (/proc/self/io
// read_bytes: the kernel's read-on-write of a partial page counts too).
func presetWAL(ctx context.Context, s *suite) error {
	dur := time.Second
	if s.c.durSet {
		dur = s.c.duration
	}
	const capBytes = 128 << 20 // the log file: appends stop at its end
	sizes := []int{100, 1 << 10, 4 << 10, 16 << 10, 64 << 10}
	kinds := []string{"growing", "preallocated", "recycled"}
	dir, err := os.MkdirTemp(s.e.dir, "testbench-wal-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s.note("wal: records of random data; each append waits for its Sync/Datasync; recycled: the file was written with O_DIRECT and synced before, so neither side has it in the page cache")
	for _, kind := range kinds {
		for _, full := range []bool{true, false} {
			sync := "Datasync"
			if full {
				sync = "Sync"
			}
			group := fmt.Sprintf("wal: 1 writer, %s file, %s after each append", kind, sync)
			for _, size := range sizes {
				for _, be := range []string{"diskio", "os.File"} {
					r := walRun(ctx, dir, walCase{group: group, backend: be, kind: kind, size: size, writers: 1, full: full, dur: dur, cap: capBytes})
					s.rep.Results = append(s.rep.Results, r)
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				if !full && s.c.fio {
					s.rep.Results = append(s.rep.Results, walFio(ctx, dir, group, kind, size, dur, capBytes))
				}
			}
		}
	}
	for _, kind := range []string{"preallocated", "recycled"} {
		group := fmt.Sprintf("wal: group commit, 4 KiB records, %s file, Datasync after each", kind)
		for _, g := range []int{16, 64} {
			for _, be := range []string{"diskio", "os.File"} {
				r := walRun(ctx, dir, walCase{group: group, backend: be, kind: kind, size: 4 << 10, writers: g, dur: dur, cap: capBytes})
				s.rep.Results = append(s.rep.Results, r)
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

type walCase struct {
	group, backend, kind string
	size, writers        int
	full                 bool // Sync, else Datasync
	dur                  time.Duration
	cap                  int64
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

func walRun(ctx context.Context, dir string, c walCase) Result {
	r := Result{Group: c.group, Label: c.backend, Backend: c.backend, Workload: "append", Goroutines: c.writers,
		BlockSize: c.size, Direct: c.backend != "os.File", Fsync: "each"}
	if c.writers > 1 {
		r.Fsync = "group"
	}
	if c.full {
		r.Label += " Sync"
	} else {
		r.Label += " Datasync"
	}
	name := filepath.Join(dir, "log-"+c.backend)
	if err := walPrepare(name, c.kind, c.cap); err != nil {
		r.Error = err.Error()
		return r
	}
	name += "-" + c.kind
	reads := &walReads{}
	var l walLog
	if c.backend == "diskio" {
		s, err := sched.New(sched.Options{Tracer: reads})
		if err != nil {
			r.Error = err.Error()
			return r
		}
		defer s.Close()
		f, err := diskio.OpenFile(name, os.O_RDWR, 0, diskio.WithScheduler(s))
		if err != nil {
			r.Error = err.Error()
			return r
		}
		l = diskioLog{f}
	} else {
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			r.Error = err.Error()
			return r
		}
		l = osLog{f}
	}
	defer l.Close()
	rec := make([]byte, c.size)
	rng := bench.NewRand(uint64(c.size))
	for i := range rec {
		rec[i] = byte(rng.Next())
	}
	h := &bench.Histogram{}
	var next, ops atomic.Int64
	var failed atomic.Value
	read0 := procReadBytes()
	m := bench.StartMeter()
	deadline := time.Now().Add(c.dur)
	var wg sync.WaitGroup
	for range c.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				off := next.Add(int64(c.size)) - int64(c.size)
				if off+int64(c.size) > c.cap {
					return
				}
				t0 := time.Now()
				if _, err := l.WriteAt(rec, off); err != nil {
					failed.Store(err)
					return
				}
				if err := l.flush(c.full); err != nil {
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
		r.Error = err.Error()
		return r
	}
	n := ops.Load()
	if n == 0 {
		r.Error = "no appends completed"
		return r
	}
	sec := u.Elapsed.Seconds()
	r.Ops, r.Bytes, r.Seconds = n, n*int64(c.size), sec
	r.IOPS, r.MBPerS = float64(n)/sec, float64(n)*float64(c.size)/sec/1e6
	r.Lat = Latency{P50: us(h.Quantile(0.5)), P90: us(h.Quantile(0.9)), P99: us(h.Quantile(0.99)),
		P999: us(h.Quantile(0.999)), Max: us(h.Max())}
	r.CPUUsPerOp = us(u.CPU) / float64(n)
	r.ThreadsPeak, r.AllocsPerOp = u.PeakThreads, float64(u.Allocs)/float64(n)
	r.Note = fmt.Sprintf("reads/append %.3f (tracer), %.0f B read/append", float64(reads.n.Load())/float64(n), float64(readBytes)/float64(n))
	// The scheduler's system calls (the File's fstat calls are not
	// counted); os.File makes two per append.
	r.SyscallsPerOp = float64(reads.sys.Load()) / float64(n)
	if c.backend != "diskio" {
		r.Note = fmt.Sprintf("%.0f B read/append", float64(readBytes)/float64(n))
		r.SyscallsPerOp = 2
	}
	return r
}

// procReadBytes is this process's read_bytes from /proc/self/io: bytes
// it caused to be read from storage.
func procReadBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "read_bytes: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// walFio is fio's row: --rw=write --fdatasync=1, buffered psync, on a
// file of the same kind.
func walFio(ctx context.Context, dir, group, kind string, size int, dur time.Duration, capBytes int64) Result {
	r := Result{Group: group, Label: "fio write+fdatasync", Backend: "fio", Workload: "append", Goroutines: 1, BlockSize: size, Fsync: "each"}
	bin, err := exec.LookPath("fio")
	if err != nil {
		r.Error = "fio is not installed (apt-get install fio)"
		return r
	}
	name := filepath.Join(dir, "log-fio")
	if err := walPrepare(name, kind, capBytes); err != nil {
		r.Error = err.Error()
		return r
	}
	name += "-" + kind
	args := []string{"--name=wal", "--filename=" + name, "--size=" + strconv.FormatInt(capBytes, 10), "--rw=write",
		"--bs=" + strconv.Itoa(size), "--ioengine=psync", "--fdatasync=1", "--fallocate=none",
		"--runtime=" + strconv.FormatInt(max(1, dur.Milliseconds()), 10) + "ms",
		"--lat_percentiles=1", "--output-format=json"}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.Error = fmt.Sprintf("fio: %v: %s", err, strings.TrimSpace(stderr.String()))
		return r
	}
	res, err := parseFio(out)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	res.Group, res.Label, res.Backend, res.Workload = r.Group, r.Label, r.Backend, r.Workload
	res.Goroutines, res.BlockSize, res.Fsync = r.Goroutines, r.BlockSize, r.Fsync
	return res
}
