//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/dio"
)

func init() {
	presets["overhead"] = presetOverhead
	presetNames = append(presetNames, "overhead")
	customRuns["overhead-fio"] = overheadFio
}

// presetOverhead measures what diskio costs per request where the device
// costs almost nothing: 4 KiB O_DIRECT random reads through diskio's
// io_uring and AIO schedulers, os.File, and fio's io_uring engine at the
// same queue depth (with and without --fixedbufs --registerfiles), at 1,
// 8, 32, 128 and 1,024 goroutines (-goroutines), on each device of
// -devices:
//
//   - shm: a file on tmpfs (/dev/shm). O_DIRECT works there since Linux
//     6.6, but tmpfs has no asynchronous read path: io_uring punts every
//     read to its io-wq workers, and Linux AIO reads synchronously in
//     io_submit.
//   - loop: an ext4 filesystem on a loop device with direct I/O over a
//     file on tmpfs (root). ext4's O_DIRECT reads are asynchronous, so
//     io_uring issues them from io_uring_enter without a worker and
//     reaps them after the loop device's kernel thread completes them:
//     the path an NVMe drive takes, with no device latency (the loop
//     device's own thread is not the process's CPU time, as a drive's
//     controller is not).
//   - zram: ext4 on a zram device (root, CONFIG_ZRAM): the bio completes
//     within its submission, so a read completes inside io_uring_enter.
//   - disk: the -dir file (the machine's real disk).
//
// null_blk and ublk, the usual latency-free block devices, are used by
// none of these: they are modules most distribution kernels leave out
// of the image (kernels without modules cannot load them); loop and zram
// are built in wherever the testbench has been run.
//
// Each row reports IOPS, CPU µs per operation (the whole process's user
// and system time over the operations; for fio, its job process's, see
// runFioCounted), IOPS
// per busy core (operations per CPU second: IOPS divided by the cores the
// process kept busy), allocations per operation, system calls per
// operation and OS threads. System calls are counted by the kernel's
// raw_syscalls:sys_enter tracepoint: in the run's process by perf events
// opened on each of its threads (inherited by the threads it starts) for
// the measured stretch; for fio by `perf stat` over its whole process
// (its start-up included). diskio runs without a Tracer, so nothing of
// the testbench's own instrumentation is in its figures. Rows run in
// alternating rounds as every preset's (-rounds 6, -duration 3s per row
// by default), each in a child process of its own. -backends selects the
// diskio and os.File rows, and then only -fio adds fio's.
func presetOverhead(ctx context.Context, s *suite) error {
	c := s.c
	gs := []int{1, 8, 32, 128, 1024}
	if c.gsSet {
		gs = c.gs
	}
	if !c.durSet {
		c.duration = 3 * time.Second
	}
	devs := c.devices
	if len(devs) == 0 {
		devs = []string{"shm", "loop", "disk"}
	}
	if _, err := exec.LookPath("fio"); err != nil {
		s.note("overhead: fio is not installed (apt-get install fio): its rows fail")
	}
	if _, err := exec.LookPath("perf"); err != nil {
		s.note("overhead: perf is not installed (apt-get install linux-perf): fio's system calls are not counted")
	}
	if _, err := syscallTracepoint(); err != nil {
		s.note("overhead: system calls are not counted: " + err.Error())
	}
	s.print = printOverhead
	// -backends (and -fio) select rows: the profiles of one row are
	// taken that way (docs/notes/2026-11-28-cpu-per-io.md).
	backends := []string{"uring", "aio", "os.File"}
	fios := []struct{ variant, label string }{{"fixed", "fio --fixedbufs --registerfiles"}, {"plain", "fio"}}
	if c.beSet {
		backends = c.backends
		if !c.fio {
			fios = nil
		}
	}
	disk := *s.e
	defer func() { *s.e = disk }()
	for _, dev := range devs {
		fd, why, err := newFastDevice(dev, s.e.size, s.e.fl)
		if err != nil {
			return fmt.Errorf("overhead: %s: %w", dev, err)
		}
		if why != "" {
			s.note(fmt.Sprintf("overhead: %s skipped: %s", dev, why))
			continue
		}
		if fd == nil { // disk: the test file in -dir
			*s.e = disk
		} else {
			*s.e = disk
			s.e.dir, s.e.path, s.e.direct = fd.dir, fd.path, true
		}
		s.note(fmt.Sprintf("overhead: %s: %s", dev, deviceDescription(dev, fd, disk.dir)))
		var jobs []Job
		group := fmt.Sprintf("%s: 4 KiB random read, O_DIRECT", dev)
		for _, g := range gs {
			for _, be := range backends {
				j := c.job(group, be, "randread", 4096, g, true)
				j.Untraced, j.CountSyscalls = true, true
				jobs = append(jobs, j)
			}
			for _, v := range fios {
				jobs = append(jobs, Job{Group: group, Label: v.label, Backend: "fio", RW: "randread", BS: 4096, G: g, Direct: true,
					Fsync: "none", Custom: "overhead-fio", Variant: v.variant, CountSyscalls: true})
			}
		}
		err = s.runAll(ctx, jobs)
		if fd != nil {
			if cerr := fd.close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func deviceDescription(dev string, fd *fastDevice, diskDir string) string {
	switch dev {
	case "shm":
		return "a file on tmpfs (" + fd.dir + "): io_uring punts its reads to io-wq workers, AIO reads in io_submit"
	case "loop":
		return fmt.Sprintf("ext4 on %s, a loop device with direct I/O (dio %v) over a file on tmpfs: reads asynchronous through the block layer, completed by the loop device's kernel thread", fd.blockDev, fd.loopDIO)
	case "zram":
		return fmt.Sprintf("ext4 on %s (zram): a bio completes within its submission", fd.blockDev)
	}
	fs, err := dio.FSType(diskDir)
	if err != nil {
		fs = "?"
	}
	return fmt.Sprintf("the test file in %s (%s)", diskDir, fs)
}

// fastDevice is a data file on a device the preset made; close undoes
// whatever of it was made.
type fastDevice struct {
	kind     string
	tmp      string // a directory on tmpfs holding everything
	backing  string // loop: the backing file
	blockDev string // /dev/loopN or /dev/zramN, once attached
	zramID   string
	loopDIO  bool
	mnt      string // the mount point, once mounted
	dir      string // where the data file is
	path     string // the data file
	fl       *files
}

// newFastDevice makes device kind with a data file of size random bytes.
// It returns nil for "disk" (the -dir file), and why it cannot make the
// device on this machine (no root, no zram) without an error.
func newFastDevice(kind string, size int64, fl *files) (d *fastDevice, why string, err error) {
	const shm = "/dev/shm"
	switch kind {
	case "disk":
		return nil, "", nil
	case "shm":
	case "loop", "zram":
		if os.Geteuid() != 0 {
			return nil, "needs root (losetup/zram, mkfs.ext4, mount)", nil
		}
		if _, err := exec.LookPath("mkfs.ext4"); err != nil {
			return nil, "mkfs.ext4 not found (e2fsprogs)", nil
		}
		if kind == "loop" {
			if _, err := exec.LookPath("losetup"); err != nil {
				return nil, "losetup not found (util-linux)", nil
			}
		} else if _, err := os.Stat("/sys/class/zram-control/hot_add"); err != nil {
			return nil, "the kernel has no zram (CONFIG_ZRAM)", nil
		}
	default:
		return nil, "", fmt.Errorf("unknown device %q (want shm, loop, zram, disk)", kind)
	}
	// The data file, and for a block device its filesystem's metadata
	// and journal, all in memory.
	if err := checkSpace(shm, size+size/8+128<<20); err != nil {
		return nil, "", err
	}
	d = &fastDevice{kind: kind, fl: fl}
	defer func() {
		if err != nil {
			d.close()
			d = nil
		}
	}()
	if d.tmp, err = os.MkdirTemp(shm, "testbench-overhead-"); err != nil {
		return d, "", err
	}
	d.dir = d.tmp
	fsSize := size + size/16 + 64<<20
	switch kind {
	case "loop":
		bf, err := fl.create(d.tmp, "backing-")
		if err != nil {
			return d, "", err
		}
		d.backing = bf.Name()
		err = bf.Truncate(fsSize)
		if cerr := bf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return d, "", err
		}
		out, err := exec.Command("losetup", "--find", "--show", "--direct-io=on", d.backing).Output()
		if err != nil {
			return d, "", fmt.Errorf("losetup --direct-io=on %s: %w", d.backing, cmdErr(err))
		}
		d.blockDev = strings.TrimSpace(string(out))
		b, _ := os.ReadFile("/sys/block/" + filepath.Base(d.blockDev) + "/loop/dio")
		d.loopDIO = strings.TrimSpace(string(b)) == "1"
	case "zram":
		b, err := os.ReadFile("/sys/class/zram-control/hot_add")
		if err != nil {
			return d, "", err
		}
		d.zramID = strings.TrimSpace(string(b))
		d.blockDev = "/dev/zram" + d.zramID
		if err := os.WriteFile("/sys/block/zram"+d.zramID+"/disksize", []byte(strconv.FormatInt(fsSize, 10)), 0); err != nil {
			return d, "", err
		}
	}
	if d.blockDev != "" {
		if out, err := exec.Command("mkfs.ext4", "-q", d.blockDev).CombinedOutput(); err != nil {
			return d, "", fmt.Errorf("mkfs.ext4 %s: %v: %s", d.blockDev, err, bytes.TrimSpace(out))
		}
		mnt := filepath.Join(d.tmp, "mnt")
		if err := os.Mkdir(mnt, 0o755); err != nil {
			return d, "", err
		}
		if err := unix.Mount(d.blockDev, mnt, "ext4", 0, ""); err != nil {
			return d, "", &os.PathError{Op: "mount", Path: mnt, Err: err}
		}
		d.mnt, d.dir = mnt, mnt
	}
	if d.path, err = makeDataFile(fl, d.dir, size, nil); err != nil {
		return d, "", err
	}
	return d, "", nil
}

// close removes the data file, unmounts, detaches the block device and
// removes the files on tmpfs.
func (d *fastDevice) close() error {
	var errs []error
	if d.path != "" {
		d.fl.remove(d.path)
		d.path = ""
	}
	if d.mnt != "" {
		var err error
		for range 50 {
			if err = unix.Unmount(d.mnt, 0); err != unix.EBUSY {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, &os.PathError{Op: "umount", Path: d.mnt, Err: err})
		} else {
			d.mnt = ""
		}
	}
	if d.mnt == "" && d.blockDev != "" {
		switch d.kind {
		case "loop":
			if out, err := exec.Command("losetup", "-d", d.blockDev).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("losetup -d %s: %v: %s", d.blockDev, err, bytes.TrimSpace(out)))
			}
		case "zram":
			if err := os.WriteFile("/sys/block/zram"+d.zramID+"/reset", []byte("1"), 0); err != nil {
				errs = append(errs, err)
			} else if err := os.WriteFile("/sys/class/zram-control/hot_remove", []byte(d.zramID), 0); err != nil {
				errs = append(errs, err)
			}
		}
		d.blockDev = ""
	}
	if d.backing != "" {
		d.fl.remove(d.backing)
		d.backing = ""
	}
	if d.tmp != "" && d.mnt == "" {
		if err := os.RemoveAll(d.tmp); err != nil {
			errs = append(errs, err)
		}
		d.tmp = ""
	}
	return errors.Join(errs...)
}

// overheadFio is fio's row of the overhead preset: the io_uring engine at
// the job's queue depth, with --fixedbufs --registerfiles (Variant
// "fixed") or without ("plain"), counted by perf stat.
var overheadFio = &customRun{
	prepare: func(e *env, _ Job) error { return nil },
	run: func(ctx context.Context, e *env, j Job, r *Result, _ *bench.Histogram) error {
		bin, err := exec.LookPath("fio")
		if err != nil {
			return errors.New("fio is not installed (apt-get install fio)")
		}
		args := fioArgs(j, e.path, e.size)
		if j.Variant == "plain" {
			args = dropArgs(args, "--fixedbufs", "--registerfiles")
		}
		res, calls, err := runFioCounted(ctx, bin, args, j.CountSyscalls)
		if err != nil {
			return err
		}
		res.Group, res.Label, res.Backend, res.Workload = r.Group, r.Label, r.Backend, r.Workload
		res.Goroutines, res.BlockSize, res.Direct, res.Fsync = r.Goroutines, r.BlockSize, r.Direct, r.Fsync
		if calls > 0 {
			res.SyscallsPerOp = float64(calls) / float64(res.Ops)
		}
		*r = res
		return nil
	},
}

func dropArgs(args []string, drop ...string) []string {
	var out []string
	for _, a := range args {
		keep := true
		for _, d := range drop {
			keep = keep && a != d
		}
		if keep {
			out = append(out, a)
		}
	}
	return out
}

// runFioCounted runs fio, under `perf stat -e raw_syscalls:sys_enter`
// when count is set and perf is installed, and returns its measurements
// and the system calls its processes made (0: not counted).
//
// fio's own usr_cpu and sys_cpu are its job thread's (getrusage
// RUSAGE_THREAD): io_uring's workers, which do the reads on tmpfs, are
// not in them. The row's CPU time per operation is instead the job
// process's, all its threads included, sampled from /proc while it runs
// (the last sample at most a few milliseconds before it exits), and its
// thread count the job process's; fio's own figure goes in the note.
func runFioCounted(ctx context.Context, bin string, args []string, count bool) (Result, int64, error) {
	name, argv := bin, args
	var perfOut string
	if perf, err := exec.LookPath("perf"); count && err == nil {
		out, err := os.CreateTemp("", "testbench-perf-*.txt")
		if err != nil {
			return Result{}, 0, err
		}
		out.Close()
		perfOut = out.Name()
		defer os.Remove(perfOut)
		name, argv = perf, append([]string{"stat", "-x", ",", "-e", "raw_syscalls:sys_enter", "-o", perfOut, "--", bin}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return Result{}, 0, err
	}
	jobs := newJobSampler(cmd.Process.Pid, bin)
	err := cmd.Wait()
	cpu, threads, workers := jobs.stop()
	if err != nil {
		return Result{}, 0, fmt.Errorf("fio: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	r, err := parseFio(stdout.Bytes())
	if err != nil {
		return r, 0, err
	}
	r.Note = fmt.Sprintf("fio's usr+sys (its job thread): %.2f µs/op", r.CPUUsPerOp)
	if cpu > 0 {
		r.CPUUsPerOp = us(cpu) / float64(r.Ops)
		r.ThreadsPeak, r.WorkersPeak = threads, workers
	}
	if perfOut == "" {
		return r, 0, nil
	}
	b, err := os.ReadFile(perfOut)
	if err != nil {
		return r, 0, err
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) >= 3 && f[2] == "raw_syscalls:sys_enter" {
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return r, 0, fmt.Errorf("perf stat: %q: %w", line, err)
			}
			return r, n, nil
		}
	}
	return r, 0, fmt.Errorf("perf stat counted no raw_syscalls:sys_enter: %s", bytes.TrimSpace(b))
}

// jobSampler follows fio's job processes (the children of the fio
// process under pid, found through /proc/PID/task/TID/children) every
// millisecond: the CPU time of all their threads (schedstat, in
// nanoseconds) and their most threads.
type jobSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	cpu  map[int]time.Duration // per job process, the latest sum
	thr  map[int][2]int        // per job process, most threads and iou-wrk threads
}

func newJobSampler(pid int, fio string) *jobSampler {
	js := &jobSampler{done: make(chan struct{}), cpu: map[int]time.Duration{}, thr: map[int][2]int{}}
	js.wg.Add(1)
	go func() {
		defer js.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			js.sample(pid, filepath.Base(fio))
			select {
			case <-js.done:
				return
			case <-t.C:
			}
		}
	}()
	return js
}

// sample reads the job processes once. Under perf, fio is perf's child
// and the jobs its grandchildren.
func (js *jobSampler) sample(pid int, fio string) {
	var jobs []int
	if commOf(pid) == fio {
		jobs = childPids(pid)
	} else {
		for _, c := range childPids(pid) {
			if commOf(c) == fio {
				jobs = append(jobs, childPids(c)...)
			}
		}
	}
	for _, job := range jobs {
		var sum time.Duration
		var n, w int
		for _, tid := range tasksOf(job) {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", job, tid))
			if err != nil {
				continue
			}
			if f := strings.Fields(string(b)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				sum += time.Duration(ns)
			}
			n++
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/comm", job, tid)); strings.HasPrefix(string(comm), "iou-wrk") {
				w++
			}
		}
		if n > 0 {
			js.cpu[job] = max(js.cpu[job], sum)
			t := js.thr[job]
			js.thr[job] = [2]int{max(t[0], n), max(t[1], w)}
		}
	}
}

func commOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// stop ends the sampling and returns the job processes' CPU time, most
// threads and most io_uring workers.
func (js *jobSampler) stop() (cpu time.Duration, threads, workers int) {
	close(js.done)
	js.wg.Wait()
	for job, c := range js.cpu {
		cpu += c
		threads, workers = max(threads, js.thr[job][0]), max(workers, js.thr[job][1])
	}
	return cpu, threads, workers
}

// childPids lists the children of process pid's main thread.
func childPids(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func tasksOf(pid int) []string {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names
}

// syscallCount counts the system calls of this process with perf events
// on the raw_syscalls:sys_enter tracepoint: one per thread alive at
// start, each inherited by the threads that thread starts, so that
// threads made during the run are counted too.
type syscallCount struct {
	fds []int
}

// syscallTracepoint is the tracepoint's id, from tracefs.
func syscallTracepoint() (uint64, error) {
	var last error
	for _, dir := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		b, err := os.ReadFile(dir + "/events/raw_syscalls/sys_enter/id")
		if err != nil {
			last = err
			continue
		}
		return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	return 0, fmt.Errorf("no raw_syscalls:sys_enter tracepoint (tracefs not mounted at /sys/kernel/tracing, or not root): %w", last)
}

func startSyscallCount() (*syscallCount, error) {
	id, err := syscallTracepoint()
	if err != nil {
		return nil, err
	}
	c := &syscallCount{}
	for _, tid := range bench.Tasks() {
		t, err := strconv.Atoi(tid)
		if err != nil {
			continue
		}
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_TRACEPOINT, Config: id, Bits: unix.PerfBitInherit}
		attr.Size = uint32(unsafe.Sizeof(attr))
		fd, err := unix.PerfEventOpen(&attr, t, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err == unix.ESRCH {
			continue // the thread is gone
		}
		if err != nil {
			c.close()
			return nil, fmt.Errorf("perf_event_open(raw_syscalls:sys_enter): %w", err)
		}
		c.fds = append(c.fds, fd)
	}
	return c, nil
}

// total is the count so far over every counted thread and its
// descendants.
func (c *syscallCount) total() (int64, error) {
	if c == nil {
		return 0, nil
	}
	var n int64
	var b [8]byte
	for _, fd := range c.fds {
		if _, err := unix.Read(fd, b[:]); err != nil {
			return 0, err
		}
		n += int64(binary.NativeEndian.Uint64(b[:]))
	}
	return n, nil
}

func (c *syscallCount) close() {
	if c == nil {
		return
	}
	for _, fd := range c.fds {
		unix.Close(fd)
	}
	c.fds = nil
}

// printOverhead is the overhead preset's table: per device and goroutine
// count, each row with its ratio to os.File and to fio (registered
// buffers and file), CPU per operation and the other costs.
func printOverhead(w io.Writer, rep *Report) {
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	head := []string{"", "G", "IOPS", "±", "x os.File", "x fio", "CPU µs/op", "IOPS/busy core", "allocs/op", "syscalls/op", "loop enters/op", "sleeps/op", "threads"}
	lines := []tableLine{{cells: head}}
	group := ""
	for _, r := range rep.Results {
		if r.Group != group {
			group = r.Group
			lines = append(lines, tableLine{title: group})
		}
		if r.Error != "" {
			lines = append(lines, tableLine{cells: []string{r.Label, strconv.Itoa(r.Goroutines), "error: " + r.Error}})
			continue
		}
		var osr, fio *Result
		for i := range rep.Results {
			b := &rep.Results[i]
			if b.Group == r.Group && b.Goroutines == r.Goroutines && b.Error == "" {
				if b.Backend == "os.File" {
					osr = b
				}
				if b.Backend == "fio" && strings.Contains(b.Label, "fixedbufs") {
					fio = b
				}
			}
		}
		ratio := func(b *Result) string {
			if b == nil || b.IOPS == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2fx", r.IOPS/b.IOPS)
		}
		perCore, allocs, sys, threads := "-", fmt.Sprintf("%.2f", r.AllocsPerOp), "-", threadsCell(r)
		enters, sleeps := "-", "-"
		if r.Backend != "fio" && r.Backend != "os.File" {
			enters, sleeps = fmt.Sprintf("%.3f", r.LoopEntersPerOp), fmt.Sprintf("%.3f", r.LoopSleepsPerOp)
		}
		if r.CPUUsPerOp > 0 {
			perCore = commas(1e6 / r.CPUUsPerOp)
		}
		if r.SyscallsPerOp > 0 {
			sys = fmt.Sprintf("%.2f", r.SyscallsPerOp)
		}
		if r.Backend == "fio" {
			allocs = "-"
			if r.ThreadsPeak == 0 {
				threads = "-"
			}
		}
		cells := []string{r.Label, strconv.Itoa(r.Goroutines), commas(r.IOPS), pct(r.Spread.IOPS, r.IOPS), ratio(osr), ratio(fio),
			num(r.CPUUsPerOp), perCore, allocs, sys, enters, sleeps, threads}
		if r.Note != "" {
			cells = append(cells, r.Note)
		}
		lines = append(lines, tableLine{cells: cells})
	}
	writeAligned(w, len(head), lines)
	fmt.Fprintf(w, "\nEach row: the median of %d alternating rounds (IOPS ±: the interval that holds the median at %s confidence). CPU µs/op: the process's user+system time\n"+
		"over its operations (fio: its job process's threads, io_uring's workers included, from /proc; the note has fio's own usr+sys, its job thread's); IOPS/busy core:\n"+
		"operations per CPU second; syscalls/op: raw_syscalls:sys_enter events (fio: its processes under perf stat, start-up included); loop enters/op, sleeps/op: the\n"+
		"scheduler loop's calls into the kernel queue, and those that waited for a completion (Stats.Enters, Sleeps; 0 where the reads were made on the callers);\n"+
		"threads: the process's OS threads at most (fio: its job process's; iou-wrk: io_uring's workers among them).\n", rep.Rounds, confidenceName(rep.Rounds))
}
