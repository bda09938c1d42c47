//go:build linux

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/diskio-go/diskio/uring"
)

// The preset API. A preset declares its rows as Jobs (job.go) and hands
// them to s.runAll(ctx, jobs); it may call runAll several times (one call
// per part of its table, as latency-model does) and read s.rep.Results
// after each call. runAll (rounds.go) does the rest for every preset alike:
//
//   - consecutive jobs with the same Group and goroutine count G form a set
//     whose rows are compared (one of them the baseline: Base, else os.File);
//   - an unmeasured warm-up (-warmup) runs the first job once per invocation;
//   - -rounds alternating rounds run every row once each, the rows of a set
//     side by side and in an order rotated by one each round; with -fio,
//     fio's equivalent of each set's first diskio job is one more row;
//   - each Result appended is the row's median over the rounds with its
//     interval (Spread) and every round (Rounds); the ratio to the set's
//     baseline carries a Mann-Whitney test, "~" when not significant.
//
// The one change to what a Job means: Duration is the row's measured time
// in all, split evenly over the rounds (it was the time of the one run).
// A preset that measures outside runAll gets no rounds; a measurement
// that is not one of exec's workloads (the wal and glommio presets') is a
// custom run named in the Job (custom.go), which runAll treats as any row.
//
// presets maps -preset names to what they run. Each runs its jobs through
// suite.runAll; latency-model adds its own measurements and analysis.
var presets = map[string]func(context.Context, *suite) error{
	"default":        presetDefault,
	"paper":          presetPaper,
	"glommio":        presetGlommio, // preset_glommio.go
	"glommio-scan":   presetGlommioScan,
	"glommio-random": presetGlommioRandom,
	"uring-write":    presetURingWrite,
	"latency-model":  presetLatencyModel,
	"fsync":          presetFsync,
	"wal":            presetWAL, // preset_wal.go
}

// job is a Job with the command line's diskio options.
func (c *config) job(group, backend, rw string, bs, g int, direct bool) Job {
	return Job{Group: group, Backend: backend, RW: rw, BS: bs, G: g, Direct: direct, Fsync: "none", Mix: c.mix,
		Buffer: c.bufSize, ReadAhead: c.readAhead, Fixed: c.fixed,
		Entries: c.entries, NoInline: c.noInline, Spin: c.spin}
}

// customJobs is the matrix the workload flags describe.
func customJobs(c *config) []Job {
	var jobs []Job
	for _, rw := range c.rws {
		for _, bs := range c.bss {
			for _, g := range c.gs {
				for _, be := range c.backends {
					j := c.job(fmt.Sprintf("%s %s", rw, sizeName(int64(bs))), be, rw, bs, g, c.direct)
					j.Fsync, j.Fallocate = c.fsync, c.fallocate
					j.Stream = rw == "read" || rw == "write"
					jobs = append(jobs, j)
				}
			}
		}
	}
	return jobs
}

// presetDefault: the README's first command.
func presetDefault(ctx context.Context, s *suite) error {
	c := s.c
	var jobs []Job
	// The seed experiments are O_DIRECT, and so are these rows; beside
	// the O_DIRECT os.File baseline, os.File as programs use it (the
	// page cache: a file read again warms it up over the rounds).
	for _, g := range c.gs {
		for _, be := range c.backends {
			jobs = append(jobs, c.job("4 KiB random read, O_DIRECT", be, "randread", 4096, g, true))
			if be == "os.File" {
				jobs[len(jobs)-1].Base = true // the O_DIRECT os.File row
				j := c.job("4 KiB random read, O_DIRECT", be, "randread", 4096, g, false)
				j.Label = "os.File buffered (as programs use it)"
				jobs = append(jobs, j)
			}
		}
	}
	for _, be := range c.backends {
		j := c.job("sequential scan, 1 reader", be, "read", 128<<10, 1, true)
		if be == "os.File" {
			j.Direct, j.Label = false, "os.File buffered, 128 KiB reads"
		} else {
			j.Stream, j.Buffer, j.ReadAhead = true, 512<<10, 8
			j.Label = be + " StreamReader 512 KiB x 8"
		}
		jobs = append(jobs, j)
	}
	if s.e.userFile {
		s.note("-file is never written: the durable write runs were skipped")
	} else {
		for _, be := range c.backends {
			j := c.job("4 KiB random write, O_DIRECT|O_DSYNC", be, "randwrite", 4096, 32, true)
			j.Fsync = "dsync"
			j.Base = be == "os.File"
			jobs = append(jobs, j)
			if be == "os.File" {
				j.Base = false
				j.Direct, j.Label = false, "os.File buffered O_DSYNC (as programs use it)"
				jobs = append(jobs, j)
			}
		}
	}
	return s.runAll(ctx, jobs)
}

// presetPaper: the 2017 attempt. Two goroutines, requests of 1 KiB to
// 1 MiB, the blocking scheduler against Linux AIO and io_uring, buffered
// and O_DIRECT, with the time spent in submitting system calls per
// request. NoInline sends every AIO/io_uring request through the
// scheduler loop and its submit call, as their design did.
func presetPaper(ctx context.Context, s *suite) error {
	c := s.c
	var jobs []Job
	for _, rw := range []string{"randread", "randwrite"} {
		for _, direct := range []bool{true, false} {
			mode := "O_DIRECT"
			if !direct {
				mode = "buffered"
			}
			group := fmt.Sprintf("paper: %s, %s, 2 goroutines", rw, mode)
			for bs := 1 << 10; bs <= 1<<20; bs *= 4 {
				for _, be := range []string{"blocking", "aio", "uring"} {
					j := c.job(group, be, rw, bs, 2, direct)
					j.Label = fmt.Sprintf("%s %s", be, sizeName(int64(bs)))
					j.Base = be == "blocking"
					j.NoInline = be != "blocking"
					j.Duration = 300 * time.Millisecond
					jobs = append(jobs, j)
				}
			}
		}
	}
	s.note("paper: blocking is diskio's blocking backend (pread/pwrite on the caller's thread, what os.File does); aio and uring run with NoInline, so every request goes through the submitting system call; submit µs/op is the time in io_submit, in io_uring_enter calls that did not wait, and in pread/pwrite")
	return s.runAll(ctx, jobs)
}

// presetGlommioScan: Glauber Costa's ladder for scanning a file.
func presetGlommioScan(ctx context.Context, s *suite) error {
	c := s.c
	const group = "scan, 1 reader (Glommio's ladder)"
	mk := func(label, be string, bs int, direct bool) Job {
		j := c.job(group, be, "read", bs, 1, direct)
		j.Label, j.Duration = label, 5*time.Second
		return j
	}
	stream := func(label string, buf, depth int, fixed bool, flags ...uint32) Job {
		j := mk(label, "uring", buf, true)
		j.Stream, j.Buffer, j.ReadAhead, j.Fixed = true, buf, depth, fixed
		for _, f := range flags {
			j.RingFlags |= f
		}
		return j
	}
	jobs := []Job{
		stream("direct 4 KiB, read-ahead 50 (StreamReader)", 4096, 50, false),
		stream("direct 512 KiB x 5", 512<<10, 5, false),
		stream("direct 512 KiB x 5, registered buffers", 512<<10, 5, true),
		stream("direct 512 KiB x 5, registered, SQPOLL", 512<<10, 5, true, uring.IORING_SETUP_SQPOLL),
		stream("direct 512 KiB x 5, registered, IOPOLL", 512<<10, 5, true, uring.IORING_SETUP_IOPOLL),
		mk("buffered 4 KiB reads (os.File)", "os.File", 4096, false),
		mk("direct 4 KiB, 1 in flight (os.File)", "os.File", 4096, true),
	}
	jobs[5].Base = true
	s.note("glommio-scan: Glommio scanned a file 2.5x RAM; here each buffered run starts from an evicted page cache instead. IOPOLL needs a driver with poll queues (virtio-blk usually has none: the row then fails)")
	return s.runAll(ctx, jobs)
}

// presetGlommioRandom: random 4 KiB reads over a working set the page
// cache holds, and over the whole file, buffered against direct.
func presetGlommioRandom(ctx context.Context, s *suite) error {
	c := s.c
	var jobs []Job
	for _, whole := range []bool{false, true} {
		group := fmt.Sprintf("random 4 KiB, 50 goroutines, first 10%% of the file (%s, warmed)", sizeName(s.e.size/10))
		if whole {
			group = "random 4 KiB, 50 goroutines, whole file (cold)"
		}
		for _, v := range []struct {
			be     string
			direct bool
			label  string
		}{{"uring", true, "direct (diskio uring)"}, {"os.File", false, "buffered (os.File)"}, {"os.File", true, "direct (os.File)"}} {
			j := c.job(group, v.be, "randread", 4096, 50, v.direct)
			j.Label, j.Base = v.label, v.be == "os.File" && !v.direct
			if !whole {
				j.Region, j.Warm = s.e.size/10, !v.direct
			}
			jobs = append(jobs, j)
		}
	}
	s.note("glommio-random: direct reads use 50 x 4 KiB = 200 KiB of buffers; the buffered runs use the page cache (the warmed 10% is read once through it before the run)")
	return s.runAll(ctx, jobs)
}

// presetURingWrite: the Rust io_uring write benchmark, sequential writes
// of a new file in 4 KiB and 512 KiB blocks.
func presetURingWrite(ctx context.Context, s *suite) error {
	c := s.c
	var jobs []Job
	for _, bs := range []int{4 << 10, 512 << 10} {
		depth := 64 // the Rust benchmark's best submit batch
		if bs > 64<<10 {
			depth = 8
		}
		for _, m := range []struct {
			name              string
			direct, fallocate bool
			fsync             string
		}{
			{"plain (page cache)", false, false, "none"},
			{"fsync at the end", false, false, "end"},
			{"O_DIRECT|O_DSYNC", true, false, "dsync"},
			{"fallocate + O_DIRECT|O_DSYNC", true, true, "dsync"},
		} {
			group := fmt.Sprintf("%s sequential write, %s", sizeName(int64(bs)), m.name)
			for _, v := range []struct {
				be, label string
				stream    bool
				fixed     bool
			}{{"uring", "uring (StreamWriter)", true, false}, {"uring", "uring-fixed (StreamWriter)", true, true}, {"os.File", "std (os.File)", false, false}} {
				j := c.job(group, v.be, "write", bs, 1, m.direct)
				j.Label, j.Stream, j.Fixed = fmt.Sprintf("%s, %d in flight", v.label, depth), v.stream, v.fixed
				if !v.stream {
					j.Label = v.label
				}
				j.Buffer, j.ReadAhead = bs, depth
				j.Fsync, j.Fallocate = m.fsync, m.fallocate
				j.Duration = 2 * time.Second
				jobs = append(jobs, j)
			}
		}
	}
	s.note(fmt.Sprintf("uring-write: each run writes a new file, up to %s or the duration; O_DSYNC stands for the Rust benchmark's O_SYNC (the file's data is durable at each write's completion; O_SYNC adds metadata a preallocated file does not need)", sizeName(s.e.size)))
	return s.runAll(ctx, jobs)
}

// presetFsync: durable 4 KiB appends: fdatasync per write, none, O_DSYNC,
// and group commit.
func presetFsync(ctx context.Context, s *suite) error {
	c := s.c
	mk := func(group, be, label string, g int, direct bool, fsync string) Job {
		j := c.job(group, be, "write", 4096, g, direct)
		j.Label, j.Fsync, j.Duration = label, fsync, 2*time.Second
		return j
	}
	g1 := "4 KiB appends, 1 writer"
	g32 := "4 KiB appends, 32 writers (each its own region)"
	jobs := []Job{
		mk(g1, "uring", "uring direct + fdatasync each", 1, true, "each"),
		mk(g1, "uring", "uring direct + O_DSYNC", 1, true, "dsync"),
		mk(g1, "os.File", "os.File buffered, no sync", 1, false, "none"),
		mk(g1, "os.File", "os.File buffered + fdatasync each", 1, false, "each"),
		mk(g1, "os.File", "os.File direct + O_DSYNC", 1, true, "dsync"),
		mk(g32, "uring", "uring direct + fdatasync each", 32, true, "each"),
		mk(g32, "uring", "uring direct + group commit", 32, true, "group"),
		mk(g32, "uring", "uring direct + O_DSYNC", 32, true, "dsync"),
		mk(g32, "os.File", "os.File direct + fdatasync each", 32, true, "each"),
		mk(g32, "os.File", "os.File direct + group commit", 32, true, "group"),
		mk(g32, "os.File", "os.File direct + O_DSYNC", 32, true, "dsync"),
	}
	jobs[2].Base, jobs[8].Base = true, true
	s.note("fsync: every write is of random data (not zeros); group commit: a writer waits for an fdatasync that started after its write, and runs one itself when none is running")
	return s.runAll(ctx, jobs)
}
