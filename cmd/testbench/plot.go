//go:build linux

package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/diskio-go/diskio/internal/bench"
)

// The figures -plot PREFIX draws with gonum.org/v1/plot, each as .svg and
// .png:
//
//	PREFIX-scaling     IOPS, p99 latency and OS threads against goroutines,
//	                   one line per backend, bars from the rounds' intervals
//	                   (for a group run at several goroutine counts)
//	PREFIX-tail        latency exceedance (the fraction of operations slower
//	                   than x, 1 - CDF) on log-log axes down to 1e-4, one
//	                   panel per group and goroutine count, all rounds merged
//	PREFIX-throughput  median MB/s of every row with its interval
//	PREFIX-model       latency-model: median latency against size, the fit

// palette: colour-blind-safe (Okabe-Ito), then greys.
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 158, 115, 255},   // green
	color.RGBA{204, 121, 167, 255}, // purple
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{86, 180, 233, 255},  // sky
	color.RGBA{240, 228, 66, 255},  // yellow
	color.RGBA{0, 0, 0, 255},       // black
}

// colors gives each row label one colour across all panels: the backends
// always the same (os.File, the usual baseline, grey), other labels the
// rest of the palette in order.
type colors struct {
	of_  map[string]color.Color
	next int
}

func newColors() *colors {
	return &colors{of_: map[string]color.Color{"uring": palette[0], "aio": palette[1], "os.File": color.Gray{Y: 120},
		"blocking": palette[2], "fio io_uring (physical limit)": palette[7]}, next: 3}
}

// key is what colours row r among the rows shown with it: its backend
// when no other row there has the same, else its label (a preset's
// variants of one backend).
func colorKey(r Result, with []Result) string {
	for _, o := range with {
		if o.Backend == r.Backend && o.Label != r.Label {
			return r.Label
		}
	}
	return r.Backend
}

func (c *colors) of(label string) color.Color {
	if col, ok := c.of_[label]; ok {
		return col
	}
	col := palette[c.next%len(palette)]
	c.next++
	c.of_[label] = col
	return col
}

func writePlots(prefix string, st *suite) error {
	prefix = strings.TrimSuffix(strings.TrimSuffix(prefix, ".svg"), ".png")
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	cols := newColors()
	figs := []figure{throughputFigure(st.rep.Results, cols), tailFigure(st.rep.Results, st.hists, cols)}
	figs = append(figs, scalingFigures(st.rep.Results, cols)...)
	if len(st.fit) > 1 && st.rep.Model != nil {
		figs = append(figs, modelFigure(st.fit, st.rep.Model))
	}
	for _, f := range figs {
		if len(f.grid) == 0 {
			continue
		}
		for _, ext := range []string{".svg", ".png"} {
			if err := f.save(prefix + "-" + f.name + ext); err != nil {
				return err
			}
		}
	}
	return nil
}

// figure is a grid of panels drawn to one file.
type figure struct {
	name string
	grid [][]*plot.Plot
	w, h vg.Length
}

func (f figure) save(path string) error {
	var c vg.CanvasWriterTo
	if filepath.Ext(path) == ".svg" {
		c = vgsvg.New(f.w, f.h)
	} else {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(96))}
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	rows, cols := len(f.grid), len(f.grid[0])
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 10, PadX: 18, PadY: 18}
	canvases := plot.Align(f.grid, tiles, dc)
	for i := range f.grid {
		for j, p := range f.grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// newPlot is a panel with the house style.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(10), vg.Points(10)
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = vg.Points(9), vg.Points(9)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())
	return p
}

// logTicks marks the powers of ten in [lo, hi] with labels from name, and
// 2..9 times them as minor ticks: labels never crowd.
type logTicks func(v float64) string

func (name logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := m * base
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 {
				t.Label = name(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// durationName writes microseconds as people read them: 10µs, 1ms, 1s.
func durationName(us float64) string {
	switch {
	case us >= 1e6:
		return strconv.FormatFloat(us/1e6, 'g', 3, 64) + "s"
	case us >= 1e3:
		return strconv.FormatFloat(us/1e3, 'g', 3, 64) + "ms"
	}
	return strconv.FormatFloat(us, 'g', 3, 64) + "µs"
}

// exceedanceName labels 1e-k with the percentile it crosses.
func exceedanceName(v float64) string {
	k := int(math.Round(-math.Log10(v)))
	switch k {
	case 0:
		return "1"
	case 1:
		return "0.1 (p90)"
	case 2:
		return "0.01 (p99)"
	}
	return fmt.Sprintf("1e-%d (p99.%s)", k, strings.Repeat("9", k-2))
}

// plainTicks are gonum's default ticks labelled like the table: 25,000
// rather than 25000.00.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if v := ts[i].Value; ts[i].Label != "" && v == math.Trunc(v) {
			ts[i].Label = commas(v)
		} else if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ts
}

// fixedTicks marks exactly the given values (the goroutine counts).
type fixedTicks []float64

func (f fixedTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for _, v := range f {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ts
}

func rowName(r Result) string {
	label := r.Label
	if r.Stream != "" && label == r.Backend {
		label += " (stream " + r.Stream + ")"
	}
	return label
}

// tailFigure: one panel per set of compared rows, the exceedance of each
// row's latency (all rounds merged) on log-log axes.
func tailFigure(rs []Result, hists []*bench.Histogram, cols *colors) figure {
	type set struct {
		title string
		idx   []int
	}
	var sets []set
	for i, r := range rs {
		if i >= len(hists) || hists[i] == nil || hists[i].Count() == 0 || r.Error != "" {
			continue
		}
		title := fmt.Sprintf("%s, %d goroutine", r.Group, r.Goroutines)
		if r.Goroutines != 1 {
			title += "s"
		}
		if len(sets) == 0 || sets[len(sets)-1].title != title {
			sets = append(sets, set{title: title})
		}
		sets[len(sets)-1].idx = append(sets[len(sets)-1].idx, i)
	}
	if len(sets) == 0 {
		return figure{}
	}
	const floor = 1e-4
	var panels []*plot.Plot
	for _, s := range sets {
		p := newPlot(s.title, "latency (log)", "fraction slower (log)")
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = logTicks(durationName), logTicks(exceedanceName)
		var with []Result
		for _, i := range s.idx {
			with = append(with, rs[i])
		}
		lo, hi := math.Inf(1), 0.0
		for _, i := range s.idx {
			pts := exceedance(hists[i], floor)
			if len(pts) == 0 {
				continue
			}
			lo, hi = min(lo, pts[0].X), max(hi, pts[len(pts)-1].X)
			l, err := plotter.NewLine(pts)
			if err != nil {
				continue
			}
			l.Color, l.Width = cols.of(colorKey(rs[i], with)), vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(rowName(rs[i]), l)
		}
		p.Y.Min, p.Y.Max = floor, 1
		p.Legend.Top = true // the curves fall away from the top right
		p.X.Min, p.X.Max = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
		panels = append(panels, p)
	}
	return figure{name: "tail", grid: gridOf(panels, 2), w: vg.Length(min(2, len(panels))) * 6 * vg.Inch,
		h: vg.Length((len(panels)+1)/2) * 3.6 * vg.Inch}
}

// exceedance is the fraction of durations above each bucket's top, as a
// staircase, down to floor (the last buckets hold too few operations to
// say more).
func exceedance(h *bench.Histogram, floor float64) plotter.XYs {
	var pts plotter.XYs
	prev := 1.0
	for _, c := range h.CDF() {
		x := math.Max(us(c.D), 0.1)
		y := 1 - c.Frac
		pts = append(pts, plotter.XY{X: x, Y: prev})
		if y < floor {
			pts = append(pts, plotter.XY{X: x, Y: floor / 2}) // leaves the panel downwards
			break
		}
		pts = append(pts, plotter.XY{X: x, Y: y})
		prev = y
	}
	return pts
}

func gridOf(panels []*plot.Plot, cols int) [][]*plot.Plot {
	var grid [][]*plot.Plot
	for i, p := range panels {
		if i%cols == 0 {
			grid = append(grid, make([]*plot.Plot, min(cols, len(panels))))
		}
		grid[len(grid)-1][i%cols] = p
	}
	return grid
}

// errXYs is points with vertical error bars.
type errXYs struct {
	plotter.XYs
	plotter.YErrors
}

// scalingFigures: for each group run at several goroutine counts, IOPS,
// p99 latency and OS threads against goroutines, one line per row label,
// with the rounds' intervals as error bars.
func scalingFigures(rs []Result, cols *colors) []figure {
	var groups []string
	gs := map[string][]float64{}
	for _, r := range rs {
		if r.Error != "" {
			continue
		}
		if !slices.Contains(groups, r.Group) {
			groups = append(groups, r.Group)
		}
		if g := float64(r.Goroutines); !slices.Contains(gs[r.Group], g) {
			gs[r.Group] = append(gs[r.Group], g)
		}
	}
	var figs []figure
	for _, group := range groups {
		if len(gs[group]) < 2 {
			continue
		}
		ticks := slices.Sorted(slices.Values(gs[group]))
		metrics := []struct {
			name, unit string
			log        bool
			val        func(Result) (float64, Interval)
		}{
			{"IOPS", "operations per second", false, func(r Result) (float64, Interval) { return r.IOPS, r.Spread.IOPS }},
			{"p99 latency", "p99 latency (log)", true, func(r Result) (float64, Interval) { return r.Lat.P99, r.Spread.P99 }},
			{"OS threads", "peak OS threads", false, func(r Result) (float64, Interval) {
				return float64(r.ThreadsPeak), r.Spread.Threads
			}},
		}
		var panels []*plot.Plot
		for _, m := range metrics {
			p := newPlot(m.name+": "+group, "goroutines (log)", m.unit)
			p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, fixedTicks(ticks)
			p.Legend.Top, p.Legend.Left = true, true
			if m.log { // latency grows with goroutines: the bottom right is free
				p.Legend.Top, p.Legend.Left = false, false
			}
			if m.log {
				p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks(durationName)
			} else {
				p.Y.Min, p.Y.Tick.Marker = 0, plainTicks{}
			}
			var labels []string
			for _, r := range rs {
				if r.Group == group && r.Error == "" && !slices.Contains(labels, r.Label) && (r.Backend != "fio" || m.name != "OS threads") {
					labels = append(labels, r.Label)
				}
			}
			var ymax float64
			var with []Result
			for _, r := range rs {
				if r.Group == group && r.Goroutines == int(ticks[0]) {
					with = append(with, r)
				}
			}
			for _, label := range labels {
				var e errXYs
				var key string
				for _, r := range rs {
					if r.Group != group || r.Label != label || r.Error != "" {
						continue
					}
					key = colorKey(r, with)
					v, ci := m.val(r)
					lo, hi := v, v
					if ci.Confidence > 0 {
						lo, hi = min(ci.Lo, v), max(ci.Hi, v)
					}
					e.XYs = append(e.XYs, plotter.XY{X: float64(r.Goroutines), Y: v})
					e.YErrors = append(e.YErrors, struct{ Low, High float64 }{v - lo, hi - v})
					ymax = max(ymax, hi)
				}
				if len(e.XYs) == 0 {
					continue
				}
				col := cols.of(key)
				l, pts, err := plotter.NewLinePoints(e.XYs)
				if err != nil {
					continue
				}
				l.Color, l.Width, pts.Color = col, vg.Points(1.5), col
				bars, err := plotter.NewYErrorBars(e)
				if err != nil {
					continue
				}
				bars.Color, bars.Width = col, vg.Points(1)
				p.Add(l, pts, bars)
				p.Legend.Add(label, l, pts)
			}
			if !m.log {
				p.Y.Max = ymax * 1.25 // room for the legend above the lines
			}
			panels = append(panels, p)
		}
		name := "scaling"
		if len(figs) > 0 {
			name = fmt.Sprintf("scaling-%d", len(figs)+1)
		}
		figs = append(figs, figure{name: name, grid: [][]*plot.Plot{panels}, w: 15 * vg.Inch, h: 4.2 * vg.Inch})
	}
	return figs
}

// throughputFigure: one panel per group, a bar per row with its median
// MB/s and the interval of the rounds.
func throughputFigure(rs []Result, cols *colors) figure {
	var groups []string
	for _, r := range rs {
		if !slices.Contains(groups, r.Group) {
			groups = append(groups, r.Group)
		}
	}
	most := 0
	var panels []*plot.Plot
	for _, group := range groups {
		var names []string
		var idx []int
		for i, r := range rs {
			if r.Group == group {
				idx = append(idx, i)
			}
		}
		most = max(most, len(idx))
		p := newPlot(group, "MB/s (median of the rounds, bars: interval)", "")
		p.Y.Tick.Label.Font.Size = vg.Points(9)
		var xmax float64
		for k := len(idx) - 1; k >= 0; k-- { // the first row on top
			r := rs[idx[k]]
			name := fmt.Sprintf("%s, G=%d", rowName(r), r.Goroutines)
			if r.Error != "" {
				name += " (failed)"
			}
			names = append(names, name)
			pos := float64(len(names) - 1)
			if r.Error != "" || r.MBPerS <= 0 {
				continue
			}
			b, err := plotter.NewBarChart(plotter.Values{r.MBPerS}, vg.Points(12))
			if err != nil {
				continue
			}
			b.Horizontal, b.XMin, b.Color = true, pos, cols.of(colorKey(r, rs[idx[0]:idx[len(idx)-1]+1]))
			b.LineStyle.Width = 0
			p.Add(b)
			lo, hi := r.MBPerS, r.MBPerS
			if ci := r.Spread.MBPerS; ci.Confidence > 0 {
				lo, hi = min(ci.Lo, lo), max(ci.Hi, hi)
			}
			xmax = max(xmax, hi)
			eb, err := plotter.NewXErrorBars(struct {
				plotter.XYs
				plotter.XErrors
			}{plotter.XYs{{X: r.MBPerS, Y: pos}}, plotter.XErrors{{Low: r.MBPerS - lo, High: hi - r.MBPerS}}})
			if err == nil {
				eb.Width, eb.CapWidth = vg.Points(1), vg.Points(6)
				p.Add(eb)
			}
		}
		p.NominalY(names...)
		p.X.Tick.Marker = plainTicks{}
		p.X.Min, p.X.Max = 0, xmax*1.05
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return figure{}
	}
	return figure{name: "throughput", grid: gridOf(panels, 1), w: 9 * vg.Inch,
		h: vg.Length(len(panels)) * (vg.Length(most)*0.26*vg.Inch + 1.1*vg.Inch)}
}

// modelFigure: the latency-model's median latencies against request size
// and the fitted line.
func modelFigure(fit []fitPoint, m *LatencyModel) figure {
	p := newPlot(fmt.Sprintf("median random-read latency: t(n) = %.1f µs + %.5f µs/B × n", m.TqUs, m.TpUsPerByte),
		"request size (log)", "µs")
	p.X.Scale = plot.LogScale{}
	var pts, line plotter.XYs
	lo, hi := fit[0].n, fit[0].n
	for _, f := range fit {
		pts = append(pts, plotter.XY{X: f.n, Y: f.us})
		lo, hi = min(lo, f.n), max(hi, f.n)
	}
	p.X.Tick.Marker = sizeTicks(lo, hi)
	for n := lo; n <= hi*1.0001; n *= 1.1 {
		line = append(line, plotter.XY{X: n, Y: m.TqUs + m.TpUsPerByte*n})
	}
	if s, err := plotter.NewScatter(pts); err == nil {
		s.Color = palette[0]
		p.Add(s)
		p.Legend.Add("measured", s)
	}
	if l, err := plotter.NewLine(line); err == nil {
		l.Color = palette[1]
		p.Add(l)
		p.Legend.Add("fit", l)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return figure{name: "model", grid: [][]*plot.Plot{{p}}, w: 8 * vg.Inch, h: 4.5 * vg.Inch}
}

// sizeTicks marks every fourth power of two from lo to hi, as sizes.
func sizeTicks(lo, hi float64) plot.ConstantTicks {
	var ts plot.ConstantTicks
	for n := lo; n <= hi*1.0001; n *= 4 {
		ts = append(ts, plot.Tick{Value: n, Label: sizeShort(int(n))})
	}
	return ts
}
