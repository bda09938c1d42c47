//go:build linux

package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
)

// cellNotes says what an op and a latency are in each cell.
var cellNotes = map[string]string{
	"load":          "bulk load: op = row, latency = one transaction",
	"commit":        "commit-bound: op = one synced single-row transaction (synchronous=FULL), one connection",
	"commitjournal": "commit-bound, journal_mode=DELETE: op = one synced single-row transaction, one connection",
	"cold":          "point reads, cold (evicted) database, 64 connections: op = one SELECT by id",
	"warm":          "point reads, database in the page cache, 64 connections: op = one SELECT by id",
	"scan":          "full scan, cold: op = row, latency = the whole scan",
	"scanwarm":      "full scans, in the page cache, repeated for the phase's duration: op = row, latency = one whole scan",
	"mix":           "90/10 read/update, 16 connections (synchronous=NORMAL): op = one SELECT or UPDATE",
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printTable prints, per cell and VFS, the medians of the rounds: ops/s,
// the ratio to the default VFS (the median of each round's ratio, the
// rounds being side by side), p99, CPU per op, and the peak OS threads of
// any round, against the bound GOMAXPROCS+4 plus io_uring's worker cap.
func printTable(rs []result, cells, vfses []string) {
	procs := runtime.GOMAXPROCS(0)
	if v, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil {
		procs = v
	}
	workerCap := 4
	if v, err := strconv.Atoi(os.Getenv("DISKIO_IOWQ_MAX_WORKERS")); err == nil {
		workerCap = v
	}
	bound := procs + 4 + workerCap
	fmt.Printf("\nMedians of %d alternating rounds; \"vs default\" is the median of the rounds' ratios. Thread bound GOMAXPROCS+4+io_uring worker cap = %d.\n\n", maxRound(rs)+1, bound)
	fmt.Println("| cell | VFS | ops/s | vs default | p99 µs | CPU µs/op | peak OS threads |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, cell := range cells {
		base := map[int]float64{}
		for _, r := range rs {
			if r.Cell == cell && r.VFS == "default" {
				base[r.Round] = r.OpsPerSec
			}
		}
		for _, v := range vfses {
			var ops, ratios, p99, cpu []float64
			threads, workers := 0, 0
			for _, r := range rs {
				if r.Cell != cell || r.VFS != v {
					continue
				}
				ops = append(ops, r.OpsPerSec)
				p99 = append(p99, r.P99)
				cpu = append(cpu, r.CPUPerOp)
				if b := base[r.Round]; b > 0 {
					ratios = append(ratios, r.OpsPerSec/b)
				}
				if r.Threads > threads {
					threads, workers = r.Threads, r.Workers
				}
			}
			ratio := "-"
			if v != "default" && len(ratios) > 0 {
				ratio = fmt.Sprintf("%.2fx", median(ratios))
			}
			th := threadsCell(threads, workers)
			if threads > bound {
				th += " (over)"
			}
			fmt.Printf("| %s | %s | %.0f | %s | %.0f | %.1f | %s |\n", cell, v, median(ops), ratio, median(p99), median(cpu), th)
		}
	}
	fmt.Println()
	for _, cell := range cells {
		fmt.Printf("- %s: %s\n", cell, cellNotes[cell])
	}
}

func maxRound(rs []result) int {
	m := 0
	for _, r := range rs {
		m = max(m, r.Round)
	}
	return m
}
