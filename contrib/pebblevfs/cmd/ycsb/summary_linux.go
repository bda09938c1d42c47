//go:build linux

package main

import (
	"fmt"
	"slices"
	"strings"
)

// printSummary prints, for each phase and file system other than the
// default, the median over the rounds of its ops/s against the default's
// of the same round, the median ratio of its synced writes' p99 (updates,
// inserts and read-modify-writes) to the default's, and the peak OS
// threads over the rounds.
func printSummary(rs []result) {
	type key struct{ fs, w string }
	base := map[int]result{}
	for _, r := range rs {
		if r.FS == "default" {
			base[r.Round] = r
		}
	}
	var phases, fss []string
	ops := map[key][]float64{}
	p99 := map[key][]float64{}
	threads := map[key][]string{}
	for _, r := range rs {
		if !slices.Contains(phases, r.Workload) {
			phases = append(phases, r.Workload)
		}
		if !slices.Contains(fss, r.FS) {
			fss = append(fss, r.FS)
		}
		k := key{r.FS, r.Workload}
		threads[k] = append(threads[k], threadsCell(r))
		b, ok := base[r.Round]
		if !ok || r.FS == "default" {
			continue
		}
		if b.OpsPerSec > 0 {
			ops[k] = append(ops[k], r.OpsPerSec/b.OpsPerSec)
		}
		if w, bw := writeP99(r), writeP99(b); w > 0 && bw > 0 {
			p99[k] = append(p99[k], w/bw)
		}
	}
	fmt.Println()
	fmt.Println("Against the default, per round and (median); synced-write p99 is of updates, inserts and read-modify-writes:")
	fmt.Println()
	fmt.Println("| phase | fs | ops/s vs default | synced-write p99 vs default | peak OS threads (default's) |")
	fmt.Println("|---|---|---|---|---|")
	for _, w := range phases {
		for _, fs := range fss {
			if fs == "default" {
				continue
			}
			k := key{fs, w}
			fmt.Printf("| %s | %s | %s | %s | %s (%s) |\n", w, fs, ratios(ops[k]), ratios(p99[k]),
				strings.Join(threads[k], ", "), strings.Join(threads[key{"default", w}], ", "))
		}
	}
}

// writeP99 is the p99 in µs of a phase's synced writes: the largest p99
// of its update, insert and rmw operations; 0 if it had none.
func writeP99(r result) float64 {
	p := 0.0
	for _, o := range r.ByOp {
		switch o.Op {
		case "update", "insert", "rmw":
			p = max(p, o.P99)
		}
	}
	return p
}

// ratios formats the per-round ratios and their median: "1.10, 0.95, 1.20 (1.10)".
func ratios(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.2f", x)
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	fmt.Fprintf(&b, " (%.2f)", m)
	return b.String()
}
