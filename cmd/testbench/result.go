package main

// This file is the documented schema of -json: the command prints one
// Report, encoded with encoding/json. Field names are stable; new fields
// may be added.

// Report is the -json output of one testbench invocation.
type Report struct {
	Preset     string   `json:"preset"`            // "default", a preset name, or "custom" (workload flags)
	Command    string   `json:"command"`           // the command line
	GoVersion  string   `json:"go_version"`        // runtime.Version()
	GOMAXPROCS int      `json:"gomaxprocs"`        // runtime.GOMAXPROCS(0)
	Dir        string   `json:"dir"`               // directory of the test files
	FSType     string   `json:"fs_type"`           // filesystem of Dir (statfs)
	Direct     bool     `json:"direct"`            // O_DIRECT works in Dir
	FileSize   int64    `json:"file_size"`         // bytes of the read test file
	FitsInRAM  bool     `json:"fits_in_ram"`       // FileSize < MemAvailable: buffered re-reads may hit the page cache
	Rounds     int      `json:"rounds"`            // alternating rounds every row ran (-rounds)
	Seccomp    string   `json:"seccomp,omitempty"` // -seccomp: the system calls the measuring processes refused ("uring", "uring,aio")
	Notes      []string `json:"notes,omitempty"`
	Results    []Result `json:"results"`
	// Model is the latency-model preset's analysis (nil for the others).
	Model *LatencyModel `json:"model,omitempty"`
	// DropIn is the dropin preset's table (nil for the others).
	DropIn *DropInSummary `json:"dropin,omitempty"`
}

// Result is one row: one backend, one workload, one goroutine count, one
// block size, run once per round. Its measurements are the medians over the
// rounds (Max the largest, Ops, Bytes and Seconds the sums); Rounds holds
// each round's own, Spread the 95% intervals of the medians. A failed row
// has Error set and zero measurements.
type Result struct {
	Group      string `json:"group"`            // table section, e.g. "4 KiB random read, O_DIRECT"
	Label      string `json:"label"`            // row name within the group
	Backend    string `json:"backend"`          // os.File, uring, aio, blocking, or fio
	Workload   string `json:"workload"`         // randread, randwrite, read, write, mixed
	Goroutines int    `json:"goroutines"`       // concurrent callers
	BlockSize  int    `json:"block_size"`       // bytes per operation
	Direct     bool   `json:"direct"`           // O_DIRECT was in effect
	Fsync      string `json:"fsync"`            // none, each, end, dsync, group (wal: fsync)
	Stream     string `json:"stream,omitempty"` // diskio stream buffers: "512 KiB x 8"

	Measures

	// Ratio is the median MB/s relative to the group's baseline row's
	// (os.File unless the preset marks another), 0 when there is none.
	Ratio float64 `json:"ratio,omitempty"`
	Base  bool    `json:"base,omitempty"` // this row is the group's baseline
	// RatioP is the p-value of the Mann-Whitney U test that the row's
	// and the baseline's per-round MB/s come from one distribution
	// (benchstat's test); RatioSignificant is RatioP < 0.05. With one
	// round there is no test: RatioP is 1 and RatioSignificant false; the
	// baseline row has no RatioP.
	RatioP           float64 `json:"ratio_p,omitempty"`
	RatioSignificant bool    `json:"ratio_significant,omitempty"`
	// RatioLo and RatioHi bound the ratio by the two medians' intervals
	// (row's low over baseline's high, and the reverse).
	RatioLo float64 `json:"ratio_lo,omitempty"`
	RatioHi float64 `json:"ratio_hi,omitempty"`

	Spread Spread  `json:"spread"`
	Rounds []Round `json:"rounds"`

	Note  string `json:"note,omitempty"`  // e.g. a fallback the run made
	Error string `json:"error,omitempty"` // why the run failed
}

// Measures are what a run of a row measured.
type Measures struct {
	IOPS        float64 `json:"iops"`             // operations per second
	MBPerS      float64 `json:"mb_per_s"`         // 10^6 bytes per second
	Lat         Latency `json:"lat_us"`           // per-operation latency, microseconds
	CPUUsPerOp  float64 `json:"cpu_us_per_op"`    // process CPU time (user+system, all threads) per operation
	ThreadsPeak int     `json:"os_threads_peak"`  // every thread of the process, io_uring's workers included
	WorkersPeak int     `json:"iou_workers_peak"` // io_uring worker threads (iou-wrk) among them
	AllocsPerOp float64 `json:"allocs_per_op"`    // heap objects allocated per operation (whole process)
	// SyscallsPerOp counts system calls per operation: from the
	// scheduler's tracer for diskio (every io_uring_enter, io_submit,
	// io_getevents, eventfd write, inline pread...), one per call for
	// os.File.
	SyscallsPerOp float64 `json:"syscalls_per_op"`
	// SubmitUsPerOp is the time spent in submitting system calls
	// (io_uring_enter calls that did not wait, io_submit, pread/pwrite)
	// per operation: the 2017 paper's measure. diskio only.
	SubmitUsPerOp float64 `json:"submit_us_per_op,omitempty"`
	// LoopEntersPerOp counts the scheduler loop's system calls into the
	// kernel queue per operation (Stats.Enters), LoopSleepsPerOp those
	// that waited for a completion (Stats.Sleeps): how many rounds the
	// loop made, and how often it slept to make them. diskio only.
	LoopEntersPerOp float64 `json:"loop_enters_per_op,omitempty"`
	LoopSleepsPerOp float64 `json:"loop_sleeps_per_op,omitempty"`
	// ReadBytesPerOp is what the process caused to be read from storage
	// per operation (/proc/self/io read_bytes: a write's read of a
	// partial page counts), ReadReqsPerOp the read requests diskio's
	// scheduler made per operation: the wal preset's.
	ReadBytesPerOp float64 `json:"read_bytes_per_op,omitempty"`
	// BusyPerS is the busy work's rate beside the run (-busy): SHA-256
	// hashes of 64 KiB per second, over the whole run.
	BusyPerS      float64 `json:"busy_hashes_per_s,omitempty"`
	ReadReqsPerOp float64 `json:"read_requests_per_op,omitempty"`

	Ops     int64   `json:"ops"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
}

// Round is one round's run of a row.
type Round struct {
	Measures
	Order int `json:"order"` // position of the run in its round's set of compared rows, from 0
}

// Spread is how far a row's medians can be trusted: each is the interval
// that holds the true median with probability Confidence, from the order
// statistics of the rounds (benchstat's, golang.org/x/perf/benchmath). With
// fewer than 6 rounds no interval reaches 95%: it is then the smallest to
// the largest round, with the confidence that has (1 - 2^(1-n)).
type Spread struct {
	IOPS    Interval `json:"iops"`
	MBPerS  Interval `json:"mb_per_s"`
	P50     Interval `json:"p50_us"`
	P99     Interval `json:"p99_us"`
	Threads Interval `json:"os_threads_peak"`
}

// Interval is a confidence interval of a median.
type Interval struct {
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
}

// Latency percentiles in microseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// LatencyModel is the latency-model preset's analysis: the least-squares
// fit of median random-read latency t(n) = TqUs + TpUsPerByte*n, what the
// kernel's read-ahead did, and the buffer size and depth it suggests.
type LatencyModel struct {
	TqUs         float64 `json:"tq_us"`            // fixed cost per request
	TpUsPerByte  float64 `json:"tp_us_per_byte"`   // transfer cost per byte
	R2           float64 `json:"r2"`               // goodness of the fit
	SmallVs4KiB  float64 `json:"small_vs_4k"`      // median latency of 512 B reads over 4 KiB reads
	ReadAheadKB  int     `json:"read_ahead_kb"`    // the device's setting, -1 if unknown
	WindowsKB    []int   `json:"windows_kb"`       // distances between reads that waited, cold sequential 4 KiB buffered reads
	SeqHitRatio  float64 `json:"seq_hit_ratio"`    // those reads served without waiting
	StrideHitPct float64 `json:"stride_hit_ratio"` // 4 KiB reads every 64 KiB served without waiting
	BufferSize   int     `json:"recommended_buffer_size"`
	Depth        int     `json:"recommended_depth"` // smallest stream read-ahead within 10% of the best measured
}

// DropInSummary is the dropin preset's table (Report.DropIn).
type DropInSummary struct {
	GOMAXPROCS int `json:"gomaxprocs"`
	// WorkerCap is the cap on io_uring's bounded workers a scheduler with
	// the default options runs with (sched.Options.IOWQMaxWorkers), 0 if
	// none was set.
	WorkerCap   int `json:"iou_worker_cap"`
	ThreadBound int `json:"thread_bound"` // GOMAXPROCS + 4 + WorkerCap
	Rounds      int `json:"rounds"`
	// Isolated: each run had a process of its own (-isolate), so its
	// thread counts are its own; without, they include earlier runs'.
	Isolated bool        `json:"isolated"`
	Rows     []DropInRow `json:"rows"`
}

// DropInRow is one workload at one parameter.
type DropInRow struct {
	Key    string     `json:"key"`   // its -workloads name, e.g. cold-read-16
	Title  string     `json:"title"` // what it does
	Unit   string     `json:"unit"`  // "ops/s" or "MB/s"
	OS     DropInCell `json:"os"`
	DiskIO DropInCell `json:"diskio"` // diskio.OpenFile, no options
	Direct DropInCell `json:"direct"` // WithDirect(Direct)
	// OK is "ok" when diskio meets the targets, else what it misses
	// ("LOW", "ROUND", "THREADS", "ERROR", with figures).
	OK string `json:"ok"`
}

// DropInCell is one side of a row.
type DropInCell struct {
	Value float64 `json:"value"` // median over the rounds, in the row's unit
	// Ratio is the median over the rounds of the round's value over os's
	// in the same round; RatioMin and RatioMax the smallest and largest.
	Ratio    float64 `json:"ratio"`
	RatioMin float64 `json:"ratio_min"`
	RatioMax float64 `json:"ratio_max"`
	Threads  int     `json:"os_threads_peak"` // the most over the rounds, io_uring's workers included
	Workers  int     `json:"iou_workers_peak"`
	CPUUsOp  float64 `json:"cpu_us_per_op"`
	// RWCallsOp is read and write system calls per operation (the
	// process's syscr + syscw: io_uring's requests are not among them).
	RWCallsOp float64 `json:"rw_syscalls_per_op"`
	P50Us     float64 `json:"p50_us"`
	P99Us     float64 `json:"p99_us"`
	// BusyPerS is the busy work's hashes per second beside the cell's
	// runs (-busy), the median over the rounds.
	BusyPerS float64 `json:"busy_hashes_per_s,omitempty"`
	Direct   bool    `json:"direct"`
	Error    string  `json:"error,omitempty"`
}
