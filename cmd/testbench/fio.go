//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// fioArgs is the fio job equivalent to j on path: the same pattern, block
// size, direct mode and durability, on io_uring with registered buffers
// and file, with as many requests in flight as j has goroutines (or
// stream buffers).
func fioArgs(j Job, path string, span int64) []string {
	rw := map[string]string{"randread": "randread", "randwrite": "randwrite", "read": "read", "write": "write", "mixed": "randrw"}[j.RW]
	depth := j.G
	if j.Stream && j.Backend != "os.File" {
		depth = j.ReadAhead * max(1, j.Buffer/j.BS)
	}
	direct := "0"
	if j.Direct {
		direct = "1"
	}
	args := []string{"--name=testbench", "--filename=" + path, "--size=" + strconv.FormatInt(span, 10),
		"--rw=" + rw, "--bs=" + strconv.Itoa(j.BS), "--direct=" + direct, "--ioengine=io_uring",
		"--fixedbufs", "--registerfiles", "--iodepth=" + strconv.Itoa(depth),
		"--runtime=" + strconv.FormatInt(max(1, j.Duration.Milliseconds()), 10) + "ms",
		"--lat_percentiles=1", "--output-format=json", "--randrepeat=0"}
	if j.RW != "read" && j.RW != "write" {
		args = append(args, "--time_based")
	}
	if j.RW == "mixed" {
		args = append(args, "--rwmixread="+strconv.Itoa(j.Mix))
	}
	switch j.Fsync {
	case "each", "group":
		args = append(args, "--fdatasync=1")
	case "end":
		args = append(args, "--end_fsync=1")
	case "dsync":
		args = append(args, "--sync=dsync")
	}
	if j.RW == "write" {
		if j.Fallocate {
			args = append(args, "--fallocate=native")
		} else {
			args = append(args, "--fallocate=none")
		}
	}
	return args
}

type fioDir struct {
	IOBytes  int64   `json:"io_bytes"`
	BWBytes  float64 `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	TotalIOs int64   `json:"total_ios"`
	Lat      struct {
		Max        float64            `json:"max"`
		Mean       float64            `json:"mean"`
		Percentile map[string]float64 `json:"percentile"`
	} `json:"lat_ns"`
}

type fioOutput struct {
	Jobs []struct {
		Error      int     `json:"error"`
		Read       fioDir  `json:"read"`
		Write      fioDir  `json:"write"`
		UsrCPU     float64 `json:"usr_cpu"`
		SysCPU     float64 `json:"sys_cpu"`
		JobRuntime float64 `json:"job_runtime"` // ms
	} `json:"jobs"`
}

// fioResult is the row of fio's equivalent of j before it runs.
func (e *env) fioResult(j Job) Result {
	r := Result{Group: j.Group, Label: "fio io_uring (physical limit)", Backend: "fio", Workload: j.RW,
		Goroutines: j.G, BlockSize: j.BS, Direct: j.Direct && e.direct, Fsync: j.Fsync}
	if c, err := customOf(j); err == nil && j.Custom != "" {
		r.Label, r.Base, r.Direct = c.fioLabel(j), c.fioBase, c.fioDirect && e.direct
	}
	return r
}

// runFio runs fio's equivalent of j and reports it as a row.
func (e *env) runFio(ctx context.Context, j Job) Result {
	r := e.fioResult(j)
	bin, err := exec.LookPath("fio")
	if err != nil {
		r.Error = "fio is not installed (apt-get install fio)"
		return r
	}
	if j.Custom != "" {
		c, err := customOf(j)
		if err == nil {
			done := e.prog.start(j.Group+": fio", j.Duration)
			var res Result
			res, err = c.fio(ctx, e, j)
			done()
			if err == nil {
				res.Group, res.Label, res.Backend, res.Workload, res.Base = r.Group, r.Label, r.Backend, r.Workload, r.Base
				res.Goroutines, res.BlockSize, res.Direct, res.Fsync = r.Goroutines, r.BlockSize, r.Direct, r.Fsync
				return res
			}
		}
		r.Error = err.Error()
		return r
	}
	path, span := e.path, e.size
	if j.Region > 0 {
		span = min(j.Region, e.size)
	}
	if j.RW == "write" {
		f, err := e.fl.create(e.dir, "testbench-fio-*.dat")
		if err != nil {
			r.Error = err.Error()
			return r
		}
		f.Close()
		path = f.Name()
		defer e.fl.remove(path)
		if j.Limit > 0 {
			span = j.Limit
		}
	} else if e.userFile && j.writes() {
		r.Error = "-file is never written"
		return r
	} else {
		dropCache(path)
	}
	if !e.direct {
		j.Direct = false
	}
	done := e.prog.start(j.Group+": fio", j.Duration)
	res, err := runFio(ctx, bin, fioArgs(j, path, span))
	done()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	res.Group, res.Label, res.Backend, res.Workload = r.Group, r.Label, r.Backend, r.Workload
	res.Goroutines, res.BlockSize, res.Direct, res.Fsync = r.Goroutines, r.BlockSize, r.Direct, r.Fsync
	return res
}

// runFio runs fio with args (JSON output) and returns its measurements;
// an error carries what fio said.
func runFio(ctx context.Context, bin string, args []string) (Result, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Result{}, fmt.Errorf("fio: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return parseFio(out)
}

// parseFio reads fio's JSON output (anything before the first '{' is
// fio's chatter) into a Result's measurements.
func parseFio(out []byte) (Result, error) {
	var r Result
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return r, errors.New("fio printed no JSON")
	}
	var fo fioOutput
	if err := json.Unmarshal(out[i:], &fo); err != nil {
		return r, fmt.Errorf("fio output: %w", err)
	}
	if len(fo.Jobs) != 1 {
		return r, fmt.Errorf("fio output: %d jobs, want 1", len(fo.Jobs))
	}
	jb := fo.Jobs[0]
	if jb.Error != 0 {
		return r, fmt.Errorf("fio job error %d", jb.Error)
	}
	// The larger direction carries the latency figures (both for mixed:
	// weighted by operations).
	rd, wr := jb.Read, jb.Write
	ios := rd.TotalIOs + wr.TotalIOs
	if ios == 0 || jb.JobRuntime <= 0 {
		return r, errors.New("fio did no I/O")
	}
	sec := jb.JobRuntime / 1e3
	r.Ops, r.Bytes, r.Seconds = ios, rd.IOBytes+wr.IOBytes, sec
	r.IOPS = rd.IOPS + wr.IOPS
	r.MBPerS = (rd.BWBytes + wr.BWBytes) / 1e6
	main := rd
	if wr.TotalIOs > rd.TotalIOs {
		main = wr
	}
	p := func(k string) float64 { return main.Lat.Percentile[k] / 1e3 }
	r.Lat = Latency{P50: p("50.000000"), P90: p("90.000000"), P99: p("99.000000"), P999: p("99.900000"),
		Max: max(rd.Lat.Max, wr.Lat.Max) / 1e3, Mean: main.Lat.Mean / 1e3}
	r.CPUUsPerOp = (jb.UsrCPU + jb.SysCPU) / 100 * sec * 1e6 / float64(ios)
	return r, nil
}
