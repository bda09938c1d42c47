//go:build linux

package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

func groupKey(r Result) string { return r.Group + "\x00" + strconv.Itoa(r.Goroutines) }

// computeRatios sets each row's MB/s relative to its group's baseline (and
// whether the rounds show the difference, see setRatio): the
// row marked Base, else the os.File row, with the same goroutine count
// and, if there is one, the same block size.
func computeRatios(rs []Result) {
	isBase := func(b, r Result) bool {
		return groupKey(b) == groupKey(r) && b.Error == "" && b.MBPerS > 0
	}
	find := func(r Result, sameBS bool) *Result {
		for _, marked := range []bool{true, false} {
			for i := range rs {
				b := rs[i]
				if !isBase(b, r) || (sameBS && b.BlockSize != r.BlockSize) {
					continue
				}
				if (marked && b.Base) || (!marked && b.Backend == "os.File" && !hasMarked(rs, r)) {
					return &rs[i]
				}
			}
		}
		return nil
	}
	for i := range rs {
		b := find(rs[i], true)
		if b == nil {
			b = find(rs[i], false)
		}
		if b != nil && rs[i].Error == "" {
			setRatio(&rs[i], b)
		}
	}
}

func hasMarked(rs []Result, r Result) bool {
	for _, b := range rs {
		if b.Base && groupKey(b) == groupKey(r) {
			return true
		}
	}
	return false
}

// printReport writes the notes, one aligned table (a title line per
// group), and the latency model if there is one.
func printReport(w io.Writer, rep *Report) {
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w)
	}
	submit := false
	for _, r := range rep.Results {
		submit = submit || r.SubmitUsPerOp > 0 && strings.HasPrefix(r.Group, "paper")
	}
	head := []string{"", "G", "block", "IOPS", "±", "MB/s", "ratio", "p50 µs", "p90", "p99", "p99.9", "max", "CPU µs/op", "threads", "allocs/op", "syscalls/op"}
	if submit {
		head = append(head, "submit µs/op")
	}
	lines := []tableLine{{cells: head}}
	group := ""
	for _, r := range rep.Results {
		if r.Group != group {
			group = r.Group
			lines = append(lines, tableLine{title: group})
		}
		label := r.Label
		if r.Stream != "" && label == r.Backend { // a custom run: say what the stream was
			label += " (stream " + r.Stream + ")"
		}
		if r.Error != "" {
			lines = append(lines, tableLine{cells: []string{label, strconv.Itoa(r.Goroutines), sizeShort(r.BlockSize), "error: " + r.Error}})
			continue
		}
		ratio := "-"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.2fx", r.Ratio)
			if r.RatioP > 0 && !r.RatioSignificant && len(r.Rounds) >= 2 {
				ratio += " ~"
			} else {
				ratio += "  "
			}
		}
		threads := threadsCell(r)
		allocs, sys, cpu := fmt.Sprintf("%.1f", r.AllocsPerOp), fmt.Sprintf("%.2f", r.SyscallsPerOp), num(r.CPUUsPerOp)
		if r.Backend == "fio" {
			threads, allocs, sys = "-", "-", "-"
		}
		cells := []string{label, strconv.Itoa(r.Goroutines), sizeShort(r.BlockSize), commas(r.IOPS), pct(r.Spread.IOPS, r.IOPS), num(r.MBPerS), ratio,
			num(r.Lat.P50), num(r.Lat.P90), num(r.Lat.P99), num(r.Lat.P999), num(r.Lat.Max), cpu, threads, allocs, sys}
		if submit {
			cells = append(cells, num(r.SubmitUsPerOp))
		}
		if r.Note != "" {
			cells = append(cells, r.Note)
		}
		lines = append(lines, tableLine{cells: cells})
	}
	writeAligned(w, len(head), lines)
	if rep.Rounds > 1 {
		fmt.Fprintf(w, "\nEach row: the median of %d alternating rounds (IOPS ±: the interval that holds the median at %s confidence); ratio: median MB/s over the baseline's,\n~ where the rounds show no difference (Mann-Whitney U, p >= 0.05). -json has every round.\n",
			rep.Rounds, confidenceName(rep.Rounds))
	}
	if m := rep.Model; m != nil {
		fmt.Fprintln(w)
		printModel(w, m)
	}
}

// tableLine is one line of an aligned table: a title, or cells.
type tableLine struct {
	title string
	cells []string
}

// writeAligned writes lines as a table of ncols aligned columns, the
// first left-aligned and the others right-aligned; a title line stands
// alone after an empty line, and cells past ncols (notes) or starting
// with "error: " follow unaligned.
func writeAligned(w io.Writer, ncols int, lines []tableLine) {
	width := make([]int, ncols+1)
	for _, l := range lines {
		for i, c := range l.cells {
			if i < ncols && !strings.HasPrefix(c, "error: ") {
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
	}
	for _, l := range lines {
		if l.title != "" {
			fmt.Fprintf(w, "\n%s\n", l.title)
			continue
		}
		var b strings.Builder
		for i, c := range l.cells {
			pad := max(0, width[min(i, len(width)-1)]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				b.WriteString(c + strings.Repeat(" ", pad))
			case i >= ncols || strings.HasPrefix(c, "error: "):
				b.WriteString("  " + c)
			default:
				b.WriteString("  " + strings.Repeat(" ", pad) + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// writeMarkdown writes a GitHub-flavoured markdown table: the first
// column left-aligned, the others right-aligned.
func writeMarkdown(w io.Writer, head []string, rows [][]string) {
	esc := strings.NewReplacer("|", "\\|")
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + esc.Replace(c) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	line(head)
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = "---:"
	}
	if len(sep) > 0 {
		sep[0] = "---"
	}
	fmt.Fprintln(w, "|"+strings.Join(sep, "|")+"|")
	for _, r := range rows {
		line(r)
	}
}

func printModel(w io.Writer, m *LatencyModel) {
	fmt.Fprintf(w, "latency model: t(n) = %.1f µs + %.5f µs/B * n (R² %.3f): %.0f µs per request, %.0f MB/s transfer\n",
		m.TqUs, m.TpUsPerByte, m.R2, m.TqUs, 1/m.TpUsPerByte)
	fmt.Fprintf(w, "  (the source: 207 µs + 0.0052 µs/B on a server SSD, 279 µs + 0.0081 µs/B on a laptop SSD)\n")
	fmt.Fprintf(w, "  512 B reads cost %.2fx a 4 KiB read\n", m.SmallVs4KiB)
	ra := "unknown"
	if m.ReadAheadKB >= 0 {
		ra = fmt.Sprintf("%d KiB", m.ReadAheadKB)
	}
	fmt.Fprintf(w, "read-ahead: read_ahead_kb %s; cold sequential 4 KiB buffered reads: %.0f%% served without waiting, waits every %v KiB; 4 KiB reads every 64 KiB: %.0f%% without waiting\n",
		ra, 100*m.SeqHitRatio, m.WindowsKB, 100*m.StrideHitPct)
	fmt.Fprintf(w, "suggested: buffers of %s (the per-request cost is a fifth of the request), %d in flight (the smallest read-ahead within 10%% of the best scan measured)\n",
		sizeName(int64(m.BufferSize)), m.Depth)
}

func sizeShort(n int) string {
	return strings.NewReplacer(" KiB", "K", " MiB", "M", " GiB", "G", " B", "").Replace(sizeName(int64(n)))
}

// num prints a measurement with 3 significant digits at most, in plain
// notation with thousands separators.
func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) < 10:
		return fmt.Sprintf("%.2f", v)
	case math.Abs(v) < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return commas(v)
}

func commas(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}
