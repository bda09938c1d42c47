//go:build linux

// Command sqlbench compares SQLite (ncruces/go-sqlite3) on its default VFS
// with SQLite on diskio's VFS (contrib/sqlitevfs), in the page-cache and
// direct modes: a bulk load in large transactions, commit-bound small
// transactions (each a synced commit), point reads from 64 connections on
// a cold and on a warm database larger than SQLite's own cache, a full
// scan, and a 90/10 read/update mix from 16 connections. Each (cell, VFS)
// runs in a child process of its own, so its CPU time and OS threads are
// its own; the VFSes take turns going first from round to round, and the
// table gives the median of the rounds.
//
//	go run ./cmd/sqlbench -rounds 3 -lock /tmp/diskio-measure.lock
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

type config struct {
	dir        string
	rows       int
	value      int
	loadRows   int
	loadBatch  int
	duration   time.Duration
	coldReads  int
	readers    int
	mixers     int
	updatePct  int
	rounds     int
	vfses      string
	cells      string
	journal    string
	cacheSize  int
	trace      string
	cpuprofile string
	lock       string
	child      string
	keep       bool
}

func main() {
	var c config
	flag.StringVar(&c.dir, "dir", os.TempDir(), "directory for the databases (O_DIRECT needs a filesystem that has it: not tmpfs)")
	flag.IntVar(&c.rows, "rows", 2_000_000, "rows of the database the read cells read (made once, kept in -dir)")
	flag.IntVar(&c.value, "value", 200, "value size in bytes")
	flag.IntVar(&c.loadRows, "load-rows", 500_000, "rows of the bulk load")
	flag.IntVar(&c.loadBatch, "load-batch", 10_000, "rows per transaction of the bulk load")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "length of the commit, warm, scanwarm, mix phases")
	flag.IntVar(&c.coldReads, "cold-reads", 200, "point reads per connection in the cold phase (few, so that it stays cold)")
	flag.IntVar(&c.readers, "readers", 64, "connections of the point-read phases")
	flag.IntVar(&c.mixers, "mixers", 16, "connections of the read/update mix")
	flag.IntVar(&c.updatePct, "update", 10, "percent of updates in the mix")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds; the VFSes take turns going first")
	flag.StringVar(&c.vfses, "vfs", "default,pagecache,direct", "VFSes: default (ncruces' own), pagecache and direct (sqlitevfs's modes)")
	flag.StringVar(&c.cells, "cells", "load,commit,cold,warm,scan,mix", "cells, in order: load, commit, commitjournal (commit in journal_mode=DELETE), cold, warm, scan, scanwarm, mix")
	flag.StringVar(&c.journal, "journal", "wal", "journal mode of every cell but commitjournal")
	flag.IntVar(&c.cacheSize, "cache-size", 0, "PRAGMA cache_size of every connection (0: SQLite's default, -2000 = 2 MiB)")
	flag.StringVar(&c.trace, "trace", "", "write an I/O-wait profile of each diskio phase to PREFIX-CELL-VFS.wait.pb.gz (go tool pprof -top), with the tracer's other files")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of each phase to PREFIX-CELL-VFS.cpu.pprof")
	flag.StringVar(&c.lock, "lock", "", "file to hold an exclusive flock on during each phase (and the database's making), e.g. /tmp/diskio-measure.lock")
	flag.BoolVar(&c.keep, "keep", true, "keep the read database in -dir for the next run")
	flag.StringVar(&c.child, "child", "", "internal: run one phase, CELL/VFS")
	flag.Parse()
	var err error
	if c.child != "" {
		err = runChild(c)
	} else {
		err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sqlbench:", err)
		os.Exit(1)
	}
}

var allCells = []string{"load", "commit", "commitjournal", "cold", "warm", "scan", "scanwarm", "mix"}

func run(c config) error {
	vfses := strings.Split(c.vfses, ",")
	for _, v := range vfses {
		if _, err := parseVFS(v); err != nil {
			return err
		}
	}
	cells := strings.Split(c.cells, ",")
	for _, cell := range cells {
		if !slices.Contains(allCells, cell) {
			return fmt.Errorf("unknown cell %q (have %s)", cell, strings.Join(allCells, ", "))
		}
	}
	root := filepath.Join(c.dir, "sqlbench")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if needsReadDB(cells) {
		if err := withLock(c.lock, func() error { return makeReadDB(c, readDBPath(c)) }); err != nil {
			return err
		}
		if !c.keep {
			defer removeDB(readDBPath(c))
		}
	}
	fmt.Printf("%d rows × %d B (read database %d MiB), load %d rows in transactions of %d, %s phases, %d cold reads per connection, %d readers, %d mixers (%d%% updates), journal %s, cache_size %d, GOMAXPROCS %s\n\n",
		c.rows, c.value, fileSize(readDBPath(c))>>20, c.loadRows, c.loadBatch, c.duration, c.coldReads, c.readers, c.mixers, c.updatePct, c.journal, c.cacheSize, gomaxprocs())

	var results []result
	for round := range c.rounds {
		for i, cell := range cells {
			order := rotate(vfses, round+i)
			for _, v := range order {
				var r result
				err := withLock(c.lock, func() error {
					if err := prepare(c, cell, v); err != nil {
						return err
					}
					var err error
					r, err = child(cell + "/" + v)
					return err
				})
				if err != nil {
					return fmt.Errorf("%s/%s: %w", cell, v, err)
				}
				r.Round = round
				results = append(results, r)
				fmt.Fprintf(os.Stderr, "round %d %-13s %-9s %12.0f ops/s  p50 %9.1f µs  p99 %9.1f µs  %7.1f CPU µs/op  %s threads\n",
					round+1, cell, v, r.OpsPerSec, r.P50, r.P99, r.CPUPerOp, threadsCell(r.Threads, r.Workers))
			}
		}
	}
	printTable(results, cells, vfses)
	return nil
}

func needsReadDB(cells []string) bool {
	for _, c := range cells {
		switch c {
		case "cold", "warm", "scan", "scanwarm", "mix":
			return true
		}
	}
	return false
}

// rotate returns s rotated left by k.
func rotate(s []string, k int) []string {
	k %= len(s)
	return append(append([]string(nil), s[k:]...), s[:k]...)
}

// withLock runs f holding an exclusive flock on path (none if path is
// empty): the machine's measurement lock, taken per phase so that others
// wait minutes at most.
func withLock(path string, f func() error) error {
	if path == "" {
		return f()
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return err
	}
	defer unix.Flock(fd, unix.LOCK_UN)
	return f()
}

// child runs one phase in a new process with the same flags.
func child(phase string) (result, error) {
	exe, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	cmd := exec.Command(exe, append([]string{"-child", phase}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	var r result
	found := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return r, err
			}
			found = true
		}
	}
	if err := cmd.Wait(); err != nil {
		return r, err
	}
	if !found {
		return r, errors.New("the child printed no result")
	}
	return r, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func gomaxprocs() string {
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		return v
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		return strconv.Itoa(set.Count())
	}
	return "?"
}

func threadsCell(threads, workers int) string {
	if workers > 0 {
		return fmt.Sprintf("%d (%d iou-wrk)", threads, workers)
	}
	return strconv.Itoa(threads)
}
