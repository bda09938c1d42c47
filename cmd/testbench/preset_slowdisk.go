//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
)

// The slowdisk preset: many goroutines reading a slow disk at once.
//
// A regular file has no readiness to poll, so every goroutine blocked in
// (*os.File).ReadAt holds an OS thread; on a disk slower than the
// goroutines ask of it the threads pile up until the runtime's limit
// (10,000, debug.SetMaxThreads) kills the process: "runtime: program
// exceeds 10000-thread limit", "fatal error: thread exhaustion". diskio
// parks the goroutines and keeps the requests in io_uring.
//
// The slow disk is a small ext4 filesystem on a loop device whose reads
// are throttled by the cgroup v1 blkio controller
// (blkio.throttle.read_iops_device) for the cgroup the measured process is
// moved into. Each side runs in a child process of its own (this program,
// re-executed with slowdiskEnv set): os.File's crash ends the child, not
// the testbench. The child starts its goroutines, each reading 4 KiB at
// a distinct random page of the cold file (so that every read is one
// request to the disk), samples its own thread count every 10 ms and
// reports on stdout; the parent keeps the child's exit status and what
// the Go runtime wrote to its stderr.

func init() { presetNames = append(presetNames, "slowdisk") } // run hands it the command line (runSlowdisk)

// slowdiskEnv carries a child's slowSpec (JSON).
const slowdiskEnv = "TESTBENCH_SLOWDISK"

const (
	slowFileSize    = 256 << 20 // the test file on the slow disk
	slowBackingSize = 2 << 30   // the loop device's backing file (sparse)
	slowReadSize    = 4096
	slowSample      = 10 * time.Millisecond
	slowTimeout     = 120 * time.Second // a child is killed after this long (-duration)
)

// slowSetting is one part of the table: every side runs it.
type slowSetting struct {
	Goroutines int
	IOPS       int           // the loop device's read limit (blkio.throttle.read_iops_device)
	For        time.Duration // 0: until every read is done or the timeout; else stop after this long
	// MaxThreads lowers the child's thread limit (debug.SetMaxThreads)
	// from the runtime's 10,000: a crash at a smaller scale.
	MaxThreads int
}

// The sides: how a child reads.
const (
	sideOS     = "os.File"
	sideDiskio = "diskio"        // diskio.OpenFile, WithDirect(PageCache): the default
	sideDirect = "diskio Direct" // WithDirect(Direct): O_DIRECT on ext4
)

// slowSettings: the headline (every read done, or the crash), then a
// milder load both sides survive, run for a fixed time.
func slowSettings(c *config) []slowSetting {
	gs := []int{12000}
	if c.gsSet {
		gs = c.gs
	}
	var ss []slowSetting
	for _, g := range gs {
		ss = append(ss, slowSetting{Goroutines: g, IOPS: 200})
	}
	return append(ss, slowSetting{Goroutines: 2000, IOPS: 10, For: 10 * time.Second})
}

func (s slowSetting) sides() []string {
	if s.For > 0 {
		return []string{sideOS, sideDiskio, sideDirect}
	}
	return []string{sideOS, sideDiskio}
}

// slowRow is one child's outcome.
type slowRow struct {
	Side       string `json:"side"`
	Goroutines int    `json:"goroutines"`
	IOPS       int    `json:"iops_limit"`
	// Throttle: blkio.throttle.read_iops_device as the kernel shows it
	// once set ("MAJ:MIN IOPS").
	Throttle   string `json:"throttle"`
	Reads      int64  `json:"reads_done"`
	ReadErrors int64  `json:"read_errors,omitempty"`
	// DiskReads: the read requests the child's cgroup sent to the device
	// by the time it ended (blkio.throttle.io_serviced, which counts a
	// request as it enters the throttle, held back or not).
	DiskReads int64 `json:"disk_reads_sent"`
	// DeviceReads, DeviceBytes: the read requests the loop device
	// completed while the child lived, and their bytes
	// (/sys/block/loopN/stat); a read-ahead request can bring in pages
	// of several goroutines' reads.
	DeviceReads int64         `json:"device_reads_done"`
	DeviceBytes int64         `json:"device_bytes_read"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	// LastReport: when the child last reported (Reads is what it counted
	// then). A child that dies has no final report: its reporter is one
	// goroutine among thousands waiting for a P, so Reads is a lower bound.
	LastReport time.Duration `json:"last_report_ns"`
	Final      bool          `json:"final_report"`
	// Checked: reads whose data the testbench read again with O_DIRECT
	// after the child ended (every read of a child that reported at
	// the end) and found the same (CRC-32); BadData: found different.
	Checked     int64 `json:"reads_checked"`
	BadData     int64 `json:"reads_bad_data"`
	checks      []slowCheck
	PeakThreads int `json:"os_threads_peak"`
	// Outcome: "finished", "stopped after 10s" (a fixed-time setting),
	// the runtime's fatal error, or why the child was killed.
	Outcome    string `json:"outcome"`
	ExitStatus string `json:"exit_status"`
	// StderrHead: the first lines the child wrote to stderr (the Go
	// runtime's fatal error).
	StderrHead []string `json:"stderr_head,omitempty"`
	Error      string   `json:"error,omitempty"` // the testbench's own failure
}

// slowReport is -json's output.
type slowReport struct {
	Preset     string    `json:"preset"`
	Command    string    `json:"command"`
	GoVersion  string    `json:"go_version"`
	Kernel     string    `json:"kernel"`
	Disk       slowInfo  `json:"disk"`
	TimeoutSec float64   `json:"timeout_s"`
	Rows       []slowRow `json:"rows"`
}

type slowInfo struct {
	Loop     string `json:"loop"`      // /dev/loopN
	Dev      string `json:"dev"`       // MAJ:MIN
	DirectIO bool   `json:"direct_io"` // the loop device reads its backing file with O_DIRECT
	Backing  string `json:"backing"`
	File     string `json:"file"`
	FileSize int64  `json:"file_size"`
}

// slowdiskSkip says why this machine cannot run the preset, or "".
func slowdiskSkip() string {
	if os.Geteuid() != 0 {
		return "needs root (losetup, mount and the blkio cgroup); run it as root, e.g. go build -o testbench ./cmd/testbench && sudo ./testbench -preset slowdisk"
	}
	for _, tool := range []string{"losetup", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not found (util-linux and e2fsprogs)"
		}
	}
	if _, err := os.Stat(filepath.Join(blkioRoot, "blkio.throttle.read_iops_device")); err != nil {
		return "needs the cgroup v1 blkio controller with throttling at " + blkioRoot + " (this system has none: a cgroup v2-only system, or a kernel without CONFIG_BLK_DEV_THROTTLING)"
	}
	return ""
}

// runSlowdisk is -preset slowdisk. It needs its own disk, not the
// testbench's test file, so run hands it the command line before making
// one.
func runSlowdisk(ctx context.Context, c *config, args []string, stdout, stderr io.Writer, fl *files) error {
	if why := slowdiskSkip(); why != "" {
		fmt.Fprintf(stdout, "slowdisk: skipped: %s\n", why)
		return nil
	}
	timeout := slowTimeout
	if c.durSet {
		timeout = c.duration
	}
	info := stdout
	if c.json {
		info = stderr
	}
	rep := &slowReport{Preset: "slowdisk", Command: "testbench " + strings.Join(args, " "), GoVersion: runtime.Version(),
		Kernel: kernelRelease(), TimeoutSec: timeout.Seconds()}
	fmt.Fprintf(info, "Go %s, GOMAXPROCS %d, Linux %s\n", rep.GoVersion, runtime.GOMAXPROCS(0), rep.Kernel)
	fmt.Fprintf(info, "making the slow disk: a %s ext4 filesystem on a loop device (backing file in %s) ...\n", sizeName(slowBackingSize), c.dir)
	made := time.Now()
	d, err := newSlowDisk(c.dir, fl)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := d.close(); cerr != nil {
			fmt.Fprintf(stderr, "slowdisk: cleaning up: %v\n", cerr)
		}
	}()
	rep.Disk = d.info()
	fmt.Fprintf(info, "%s (%s), direct I/O to its backing file: %v; %s of random data in %s, evicted before each child (made in %v)\n",
		d.loop, d.dev, d.directIO, sizeName(d.size), d.path, time.Since(made).Round(100*time.Millisecond))
	fmt.Fprintf(info, "each side in a child process in a blkio cgroup of its own; children are killed after %v\n\n", timeout)
	for _, s := range slowSettings(c) {
		for _, side := range s.sides() {
			what := fmt.Sprintf("%s: %d goroutines at %d IOPS", side, s.Goroutines, s.IOPS)
			if s.For > 0 {
				what += fmt.Sprintf(" for %v", s.For)
			}
			fmt.Fprintf(stderr, "slowdisk: %s ...\n", what)
			t0 := time.Now()
			r := d.run(ctx, s, side, timeout)
			if err := ctx.Err(); err != nil {
				return err
			}
			if r.Error != "" {
				fmt.Fprintf(stderr, "slowdisk: %s: %s\n", what, r.Error)
			} else {
				fmt.Fprintf(stderr, "slowdisk: %s: %s, %d reads in %v, %d OS threads at most (read_iops_device %q; %v with the eviction before and the cgroup's removal after)\n",
					what, r.Outcome, r.Reads, r.Elapsed.Round(10*time.Millisecond), r.PeakThreads, r.Throttle, time.Since(t0).Round(10*time.Millisecond))
			}
			rep.Rows = append(rep.Rows, r)
		}
	}
	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printSlowdisk(stdout, rep)
	return nil
}

func printSlowdisk(w io.Writer, rep *slowReport) {
	fmt.Fprintf(w, "4 KiB reads at distinct random pages of a cold %s file, one per goroutine, reads throttled (blkio.throttle.read_iops_device on %s)\n\n",
		sizeName(rep.Disk.FileSize), rep.Disk.Dev)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "side\tgoroutines\tIOPS limit\treads done / total\tdisk requests sent / done (KiB each)\telapsed\tpeak OS threads\toutcome")
	for _, r := range rep.Rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\t\t\t\terror: %s\n", r.Side, r.Goroutines, r.IOPS, r.Error)
			continue
		}
		reads := strconv.FormatInt(r.Reads, 10)
		if !r.Final {
			reads = "≥" + reads // see below
		}
		each := "-"
		if r.DeviceReads > 0 {
			each = fmt.Sprintf("%.1f", float64(r.DeviceBytes)/float64(r.DeviceReads)/1024)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s / %d\t%d / %d (%s)\t%.2f s\t%d\t%s\n", r.Side, r.Goroutines, r.IOPS, reads, r.Goroutines,
			r.DiskReads, r.DeviceReads, each, r.Elapsed.Seconds(), r.PeakThreads, r.Outcome)
	}
	tw.Flush()
	var checked, bad int64
	for _, r := range rep.Rows {
		checked, bad = checked+r.Checked, bad+r.BadData
	}
	fmt.Fprintf(w, "\ndata: %d reads of children that reported at the end read again with O_DIRECT after them, %d different\n", checked, bad)
	for _, r := range rep.Rows {
		if r.Error != "" || r.Final {
			continue
		}
		fmt.Fprintf(w, "\n%s, %d goroutines (%s): reads done is a lower bound, the count at the child's last report (%.2f s after the start; its reporter is a goroutine waiting for a P among the others)\n",
			r.Side, r.Goroutines, r.ExitStatus, r.LastReport.Seconds())
		if len(r.StderrHead) > 0 {
			fmt.Fprintln(w, "stderr:")
			for _, l := range r.StderrHead {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
	}
	fmt.Fprintf(w, "\ndisk requests: sent by the child's cgroup, let through by the throttle or still held back when it ended (blkio.throttle.io_serviced), and done by the loop device while the child lived (/sys/block/%s/stat); peak OS threads: the child's Threads (/proc/PID/status), sampled every 10 ms by the child and by the testbench; elapsed: from the start signal to the last read, to the fatal error, or to the stop\n", filepath.Base(rep.Disk.Loop))
}

// slowDisk is the loop device, its filesystem and the test file; close
// undoes whatever of it was made.
type slowDisk struct {
	tmp      string // the directory holding the backing file and the mount point
	backing  string
	loop     string // /dev/loopN, once attached
	dev      string // its MAJ:MIN
	directIO bool
	mnt      string // the mount point, once mounted
	path     string // the test file
	size     int64
	fl       *files
}

func newSlowDisk(dir string, fl *files) (d *slowDisk, err error) {
	if err := checkSpace(dir, slowFileSize+256<<20); err != nil { // the file, the journal and metadata
		return nil, err
	}
	d = &slowDisk{fl: fl, size: slowFileSize}
	defer func() {
		if err != nil {
			d.close()
			d = nil
		}
	}()
	if d.tmp, err = os.MkdirTemp(dir, "testbench-slowdisk-"); err != nil {
		return d, err
	}
	if d.tmp, err = filepath.Abs(d.tmp); err != nil {
		return d, err
	}
	bf, err := fl.create(d.tmp, "backing-")
	if err != nil {
		return d, err
	}
	d.backing = bf.Name()
	err = bf.Truncate(slowBackingSize) // sparse
	if cerr := bf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return d, err
	}
	// Direct I/O to the backing file keeps its blocks out of the page
	// cache a second time (the throttle sits above the loop device and
	// works either way; losetup refuses it where the backing file's
	// filesystem has no O_DIRECT, e.g. tmpfs).
	out, err := exec.Command("losetup", "--find", "--show", "--direct-io=on", d.backing).Output()
	if err != nil {
		out, err = exec.Command("losetup", "--find", "--show", d.backing).Output()
	}
	if err != nil {
		return d, fmt.Errorf("losetup %s: %w", d.backing, cmdErr(err))
	}
	d.loop = strings.TrimSpace(string(out))
	name := filepath.Base(d.loop)
	b, err := os.ReadFile("/sys/block/" + name + "/dev")
	if err != nil {
		return d, err
	}
	d.dev = strings.TrimSpace(string(b))
	b, _ = os.ReadFile("/sys/block/" + name + "/loop/dio")
	d.directIO = strings.TrimSpace(string(b)) == "1"
	if out, err := exec.Command("mkfs.ext4", "-q", d.loop).CombinedOutput(); err != nil {
		return d, fmt.Errorf("mkfs.ext4 %s: %v: %s", d.loop, err, bytes.TrimSpace(out))
	}
	mnt := filepath.Join(d.tmp, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		return d, err
	}
	if err := unix.Mount(d.loop, mnt, "ext4", 0, ""); err != nil {
		return d, &os.PathError{Op: "mount", Path: mnt, Err: err}
	}
	d.mnt = mnt
	d.path = filepath.Join(mnt, "data")
	f, err := os.Create(d.path)
	if err != nil {
		return d, err
	}
	err = bench.Fill(f, d.size, nil) // random data, synced, evicted
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return d, err
}

func (d *slowDisk) info() slowInfo {
	return slowInfo{Loop: d.loop, Dev: d.dev, DirectIO: d.directIO, Backing: d.backing, File: d.path, FileSize: d.size}
}

// close unmounts, detaches the loop device and removes the files. It
// retries an unmount the kernel finds busy for a few seconds (a killed
// child's last reads completing).
func (d *slowDisk) close() error {
	var errs []error
	if d.mnt != "" {
		var err error
		for i := 0; i < 50; i++ {
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
	if d.loop != "" && d.mnt == "" {
		if out, err := exec.Command("losetup", "-d", d.loop).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("losetup -d %s: %v: %s", d.loop, err, bytes.TrimSpace(out)))
		} else {
			d.loop = ""
		}
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

// evict drops the test file from the page cache and checks that none of
// it is left, pages still being read included: the last child's reads,
// held back by its throttle until the testbench lifted it, complete
// after the child is gone, and a page they bring in after the eviction
// would be a free read for the next child. The file counts as drained
// once its page cache is empty (cachestat(2), which counts pages under
// read I/O; mincore(2) does not, and is the fallback before Linux 6.5)
// and the loop device has completed no read for 200 ms.
func (d *slowDisk) evict() error {
	var left int64
	quiet := 0
	last, _ := deviceReads(d.loop)
	for i := 0; i < 300; i++ {
		if err := bench.Evict(d.path); err != nil {
			return err
		}
		var err error
		if left, err = cachedPages(d.path); err != nil {
			return err
		}
		reads, _ := deviceReads(d.loop)
		if left == 0 && reads == last {
			quiet++
		} else {
			quiet = 0
		}
		if quiet == 4 {
			return nil
		}
		last = reads
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s does not leave the page cache (%d pages stay) or the loop device keeps reading, 15 s after the last child ended", d.path, left)
}

// cachedPages counts the file's pages in the page cache: cachestat(2)
// where the kernel has it (pages being read count), mincore(2) (only
// pages read in) otherwise.
func cachedPages(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var cs unix.Cachestat_t
	err = unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &cs, 0) // Len 0: to the end
	if err == nil {
		return int64(cs.Cache), nil
	}
	if err != unix.ENOSYS {
		return 0, &os.PathError{Op: "cachestat", Path: path, Err: err}
	}
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, err
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return 0, &os.PathError{Op: "mincore", Path: path, Err: errno}
	}
	var n int64
	for _, v := range vec {
		n += int64(v & 1)
	}
	return n, nil
}

// blkioRoot is the cgroup v1 blkio hierarchy.
const blkioRoot = "/sys/fs/cgroup/blkio"

// throttle is a blkio cgroup limiting reads of one device.
type throttle struct {
	dir     string
	dev     string
	setting string // the kernel's read_iops_device once set
}

var throttles atomic.Int64 // names cgroups apart within the process

func newThrottle(dev string, iops int) (*throttle, error) {
	t := &throttle{dev: dev, dir: filepath.Join(blkioRoot, fmt.Sprintf("testbench-slowdisk-%d-%d", os.Getpid(), throttles.Add(1)))}
	if err := os.Mkdir(t.dir, 0o755); err != nil {
		return nil, err
	}
	if err := t.set(iops); err != nil {
		t.remove()
		return nil, err
	}
	want := fmt.Sprintf("%s %d", dev, iops)
	b, err := os.ReadFile(filepath.Join(t.dir, "blkio.throttle.read_iops_device"))
	if t.setting = strings.TrimSpace(string(b)); err != nil || t.setting != want {
		t.remove()
		return nil, fmt.Errorf("%s: blkio.throttle.read_iops_device reads %q (%v) after writing %q", t.dir, t.setting, err, want)
	}
	return t, nil
}

// set writes the read limit; 0 lifts it, and the kernel then dispatches
// what it held back.
func (t *throttle) set(iops int) error {
	return os.WriteFile(filepath.Join(t.dir, "blkio.throttle.read_iops_device"), []byte(fmt.Sprintf("%s %d\n", t.dev, iops)), 0)
}

// add moves a process (all its threads) into the cgroup.
func (t *throttle) add(pid int) error {
	return os.WriteFile(filepath.Join(t.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)+"\n"), 0)
}

// serviced reads how many reads of the device the kernel let through for
// the cgroup (blkio.throttle.io_serviced).
func (t *throttle) serviced() int64 {
	b, err := os.ReadFile(filepath.Join(t.dir, "blkio.throttle.io_serviced"))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == t.dev && f[1] == "Read" {
			n, _ := strconv.ParseInt(f[2], 10, 64)
			return n
		}
	}
	return 0
}

// remove lifts the limit and removes the cgroup once its processes are
// gone (a killed child takes a moment to exit).
func (t *throttle) remove() error {
	t.set(0)
	var err error
	for i := 0; i < 100; i++ {
		if err = unix.Rmdir(t.dir); err != unix.EBUSY {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil && err != unix.ENOENT {
		return &os.PathError{Op: "rmdir", Path: t.dir, Err: err}
	}
	return nil
}

// slowSpec is what a child is asked to do.
type slowSpec struct {
	Side       string
	Path       string
	Size       int64
	Goroutines int
	For        time.Duration
	MaxThreads int
	Seed       uint64
}

// slowCheck is a read a child made: where, and the CRC-32 of what it got.
type slowCheck struct {
	Off int64
	CRC uint32
}

// slowProgress is a child's report, one JSON line on stdout per sample;
// the last one before the child ends has Final set.
type slowProgress struct {
	Done        int64         // reads completed
	Errors      int64         // of them, failed
	FirstError  string        `json:",omitempty"`
	Checks      []slowCheck   `json:",omitempty"` // the final report's: every read done
	Elapsed     time.Duration // since the start signal; the last read's completion once all are done
	Since       time.Duration // since the start signal
	Threads     int
	PeakThreads int
	Final       bool
}

// run runs one side of s in a child process and reports it.
func (d *slowDisk) run(ctx context.Context, s slowSetting, side string, timeout time.Duration) slowRow {
	r := slowRow{Side: side, Goroutines: s.Goroutines, IOPS: s.IOPS}
	if err := d.evict(); err != nil {
		r.Error = err.Error()
		return r
	}
	t, err := newThrottle(d.dev, s.IOPS)
	if err != nil {
		r.Error = fmt.Sprintf("blkio cgroup: %v", err)
		return r
	}
	r.Throttle = t.setting
	defer func() {
		if err := t.remove(); err != nil && r.Error == "" {
			r.Error = err.Error()
		}
	}()
	if err := runSlowChild(ctx, slowSpec{Side: side, Path: d.path, Size: d.size, Goroutines: s.Goroutines, For: s.For, MaxThreads: s.MaxThreads, Seed: rand.Uint64()},
		d.loop, t, timeout, &r); err != nil {
		r.Error = err.Error()
		return r
	}
	if err := d.check(&r); err != nil {
		r.Error = "checking the data read: " + err.Error()
	}
	if r.BadData > 0 {
		r.Outcome += fmt.Sprintf("; %d of %d reads returned data the disk does not hold", r.BadData, r.Checked)
	}
	return r
}

// check reads again, with O_DIRECT (from the disk, not the page cache
// the child's reads filled), every page the child read, and counts the
// pages whose CRC-32 differs from the child's.
func (d *slowDisk) check(r *slowRow) error {
	if len(r.checks) == 0 {
		return nil
	}
	fd, err := unix.Open(d.path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: d.path, Err: err}
	}
	defer unix.Close(fd)
	buf, err := unix.Mmap(-1, 0, slowReadSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE) // page-aligned
	if err != nil {
		return err
	}
	defer unix.Munmap(buf)
	for _, c := range r.checks {
		n, err := unix.Pread(fd, buf, c.Off)
		if err == unix.EINTR {
			n, err = unix.Pread(fd, buf, c.Off)
		}
		if err != nil {
			return &os.PathError{Op: "pread", Path: d.path, Err: err}
		}
		if n != len(buf) {
			return fmt.Errorf("%s: %d bytes at %d, want %d", d.path, n, c.Off, len(buf))
		}
		r.Checked++
		if crc32.ChecksumIEEE(buf) != c.CRC {
			r.BadData++
		}
	}
	r.checks = nil
	return nil
}

// runSlowChild starts the child, moves it into t's cgroup, tells it to
// start and follows it until it ends or timeout.
func runSlowChild(ctx context.Context, spec slowSpec, loop string, t *throttle, timeout time.Duration, r *slowRow) error {
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, exe)
	cmd.Env = append(os.Environ(), slowdiskEnv+"="+string(b))
	cmd.WaitDelay = 10 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	errOut := &stderrHead{max: 8 << 10}
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		return err
	}
	var last slowProgress
	var lastMu sync.Mutex
	got := make(chan struct{})
	ready := make(chan struct{}, 1)
	go func() {
		defer close(got)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 64<<20) // the final report lists every read
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- struct{}{}
				continue
			}
			var p slowProgress
			if json.Unmarshal(sc.Bytes(), &p) == nil {
				lastMu.Lock()
				last = p
				lastMu.Unlock()
			}
		}
	}()
	if err := t.add(cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("moving the child into %s: %w", t.dir, err)
	}
	select { // the child has opened the file and made its offsets
	case <-ready:
	case <-got:
	case <-cctx.Done():
	}
	reads0, bytes0 := deviceReads(loop)
	start := time.Now()
	errOut.start(start)
	stdin.Write([]byte{'\n'}) // start
	// The child samples itself, but its sampler is one goroutine among
	// thousands: count from outside too.
	outside := make(chan int)
	go func() {
		peak := 0
		tick := time.NewTicker(slowSample)
		defer tick.Stop()
		for {
			peak = max(peak, threadsOf(cmd.Process.Pid))
			select {
			case <-tick.C:
			case <-got:
				outside <- peak
				return
			}
		}
	}()
	waitErr := cmd.Wait()
	r.DiskReads = t.serviced()
	reads1, bytes1 := deviceReads(loop)
	r.DeviceReads, r.DeviceBytes = reads1-reads0, bytes1-bytes0
	<-got
	lastMu.Lock()
	p := last
	lastMu.Unlock()
	r.Reads, r.ReadErrors, r.PeakThreads, r.Elapsed = p.Done, p.Errors, max(p.PeakThreads, <-outside), p.Elapsed
	r.LastReport, r.Final = p.Since, p.Final
	r.checks = p.Checks
	r.StderrHead = errOut.paragraph(12)
	r.ExitStatus = "exit status 0"
	if waitErr != nil {
		r.ExitStatus = waitErr.Error()
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case cctx.Err() != nil:
		r.Outcome = fmt.Sprintf("killed after %v (timeout)", timeout)
		r.Elapsed = time.Since(start)
	case waitErr == nil && p.Final && p.Done == int64(spec.Goroutines):
		r.Outcome = "finished"
	case waitErr == nil && p.Final && spec.For > 0:
		r.Outcome = fmt.Sprintf("alive, stopped after %v", spec.For)
	default:
		r.Outcome = errOut.fatal()
		if r.Outcome == "" {
			r.Outcome = "ended: " + r.ExitStatus
		}
		if at := errOut.firstAt(); !at.IsZero() {
			r.Elapsed = at.Sub(start) // the fatal error's time, not the last report's
		}
	}
	if p.FirstError != "" {
		r.Outcome += "; read error: " + p.FirstError
	}
	if p.Errors > 0 && p.FirstError == "" {
		r.Outcome += fmt.Sprintf("; %d read errors", p.Errors)
	}
	return nil
}

// deviceReads returns the read requests a block device has completed
// and their bytes (/sys/block/NAME/stat: reads, merges, sectors, ...).
func deviceReads(dev string) (reads, n int64) {
	b, err := os.ReadFile("/sys/block/" + filepath.Base(dev) + "/stat")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, 0
	}
	reads, _ = strconv.ParseInt(f[0], 10, 64)
	sectors, _ := strconv.ParseInt(f[2], 10, 64)
	return reads, sectors * 512
}

// threadsOf returns the Threads: line of /proc/pid/status, 0 once the
// process is gone.
func threadsOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	_, rest, _ := bytes.Cut(b, []byte("\nThreads:"))
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, _ := strconv.Atoi(string(bytes.TrimSpace(line)))
	return n
}

// stderrHead keeps the first max bytes a child writes to stderr, and when
// the first of them came after start.
type stderrHead struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	t0    time.Time
	first time.Time
}

func (h *stderrHead) start(t time.Time) {
	h.mu.Lock()
	h.t0 = t
	h.mu.Unlock()
}

func (h *stderrHead) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.first.IsZero() && !h.t0.IsZero() && len(p) > 0 {
		h.first = time.Now()
	}
	if n := h.max - len(h.buf); n > 0 {
		h.buf = append(h.buf, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

func (h *stderrHead) firstAt() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.first
}

func (h *stderrHead) lines(n int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(h.buf), "\n"), "\n") {
		if len(out) == n {
			break
		}
		if l != "" || len(out) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// paragraph returns the lines before the first empty one (the Go
// runtime's message before its stack traces), n at most.
func (h *stderrHead) paragraph(n int) []string {
	ls := h.lines(n)
	for i, l := range ls {
		if l == "" {
			return ls[:i]
		}
	}
	return ls
}

// fatal returns the runtime's "fatal error: ..." (or panic) line, with
// the "runtime: ..." line before it if there is one.
func (h *stderrHead) fatal() string {
	var why string
	for _, l := range h.lines(40) {
		switch {
		case strings.HasPrefix(l, "runtime: ") && why == "":
			why = l
		case strings.HasPrefix(l, "fatal error: "), strings.HasPrefix(l, "panic: "):
			if why != "" {
				return l + " (" + why + ")"
			}
			return l
		}
	}
	return why
}

// slowdiskChild runs a slowdisk child's side if this process is one (the
// environment has slowdiskEnv), and exits; otherwise it returns at once.
// Call it first thing in main (and TestMain).
func slowdiskChild() {
	spec := os.Getenv(slowdiskEnv)
	if spec == "" {
		return
	}
	var s slowSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, "slowdisk child:", err)
		os.Exit(3)
	}
	// Ctrl-C reaches the process group; the parent kills the child.
	// (os/signal.Notify would add threads; Ignore adds none.)
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	if s.MaxThreads > 0 {
		debug.SetMaxThreads(s.MaxThreads)
	}
	if err := slowRead(s); err != nil {
		fmt.Fprintln(os.Stderr, "slowdisk child:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// slowRead is the child: open the file, wait for the parent's start
// signal on stdin, start s.Goroutines readers and report.
func slowRead(s slowSpec) error {
	var readAt func([]byte, int64) (int, error)
	switch s.Side {
	case sideOS:
		f, err := os.Open(s.Path)
		if err != nil {
			return err
		}
		readAt = f.ReadAt // one *os.File shared by all the goroutines
	case sideDiskio, sideDirect:
		mode := diskio.PageCache
		if s.Side == sideDirect {
			mode = diskio.Direct
		}
		f, err := diskio.OpenFile(s.Path, os.O_RDONLY, 0, diskio.WithDirect(mode))
		if err != nil {
			return err
		}
		if s.Side == sideDirect && !f.Direct() {
			return fmt.Errorf("%s: O_DIRECT refused", s.Path)
		}
		readAt = f.ReadAt
	default:
		return fmt.Errorf("unknown side %q", s.Side)
	}
	// Distinct pages, so that every read is a request to the disk and not
	// a page another goroutine's read brought in.
	pages := int(s.Size / slowReadSize)
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed>>1|1))
	perm := rng.Perm(pages)
	offs := make([]int64, s.Goroutines)
	for i := range offs {
		offs[i] = int64(perm[i%pages]) * slowReadSize
	}
	// The start signal and, after it, the parent's end (EOF) through the
	// runtime's poller: a blocking read would hold a thread.
	if err := syscall.SetNonblock(0, true); err != nil {
		return err
	}
	in := os.NewFile(0, "parent pipe")
	os.Stdout.WriteString("ready\n")
	var b [1]byte
	if _, err := in.Read(b[:]); err != nil {
		return fmt.Errorf("no start signal: %w", err)
	}
	parentGone := make(chan struct{})
	go func() {
		for {
			if _, err := in.Read(b[:]); err != nil {
				close(parentGone)
				return
			}
		}
	}()

	var done, failed atomic.Int64
	var firstErr atomic.Pointer[string]
	var doneAt atomic.Int64 // ns after start when the last read completed
	sums := make([]uint32, len(offs))
	read := make([]atomic.Bool, len(offs)) // sums[i] is set
	all := make(chan struct{})
	var start time.Time
	peak := 0
	report := func(final bool) {
		th := bench.Threads()
		peak = max(peak, th)
		now := time.Since(start)
		p := slowProgress{Done: done.Load(), Errors: failed.Load(), Elapsed: now, Since: now, Threads: th, PeakThreads: peak, Final: final}
		if at := doneAt.Load(); at > 0 {
			p.Elapsed = time.Duration(at)
		}
		if e := firstErr.Load(); e != nil {
			p.FirstError = *e
		}
		if final {
			for i, off := range offs {
				if read[i].Load() {
					p.Checks = append(p.Checks, slowCheck{Off: off, CRC: sums[i]})
				}
			}
		}
		line, _ := json.Marshal(p)
		os.Stdout.Write(append(line, '\n'))
	}
	start = time.Now()
	report(false) // the threads before the readers
	for i, off := range offs {
		go func() {
			buf := make([]byte, slowReadSize)
			n, err := readAt(buf, off)
			if err == nil && n != len(buf) {
				err = fmt.Errorf("read %d bytes of %d at %d", n, len(buf), off)
			}
			if err != nil {
				failed.Add(1)
				msg := err.Error()
				firstErr.CompareAndSwap(nil, &msg)
			} else {
				sums[i] = crc32.ChecksumIEEE(buf)
				read[i].Store(true)
			}
			if done.Add(1) == int64(len(offs)) {
				doneAt.Store(int64(time.Since(start)))
				close(all)
			}
		}()
	}
	tick := time.NewTicker(slowSample)
	defer tick.Stop()
	var stop <-chan time.Time
	if s.For > 0 {
		stop = time.After(s.For)
	}
loop:
	for {
		select {
		case <-tick.C:
			report(false)
		case <-all:
			break loop
		case <-stop:
			break loop
		case <-parentGone:
			break loop
		}
	}
	report(true)
	return nil
}

func cmdErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%v: %s", err, bytes.TrimSpace(ee.Stderr))
	}
	return err
}

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "?"
	}
	return unix.ByteSliceToString(u.Release[:])
}
