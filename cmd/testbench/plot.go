//go:build linux

package main

import (
	"fmt"
	"html"
	"math"
	"os"
	"strings"
)

// The plot is hand-written SVG: three simple panels do not need a
// plotting library. Panel 1: latency CDFs of the first group's runs (log
// time axis). Panel 2: MB/s of every run. Panel 3 (latency-model): median
// latency against request size with the fitted t(n).

const (
	plotW  = 960
	left   = 330 // room for row labels
	right  = 40
	panelH = 320
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

type svg struct {
	b strings.Builder
	y int // top of the next panel
}

func (s *svg) f(format string, args ...any) { fmt.Fprintf(&s.b, format+"\n", args...) }

func (s *svg) text(x, y float64, anchor, size, str string) {
	s.f(`<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%s">%s</text>`, x, y, anchor, size, html.EscapeString(str))
}

// logTicks returns the powers of ten in [lo, hi], and 2x and 5x ones when
// there are few.
func logTicks(lo, hi float64) []float64 {
	var t []float64
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, e); v >= lo && v <= hi {
				t = append(t, v)
			}
		}
	}
	return t
}

func writePlot(path string, st *suite) error {
	s := &svg{y: 10}
	s.cdfPanel(st)
	s.barPanel(st)
	if len(st.fit) > 1 && st.rep.Model != nil {
		s.fitPanel(st)
	}
	out := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">`+"\n", plotW, s.y+10) +
		fmt.Sprintf(`<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, s.y+10) + s.b.String() + "</svg>\n"
	return os.WriteFile(path, []byte(out), 0o644)
}

func (s *svg) cdfPanel(st *suite) {
	rs := st.rep.Results
	if len(rs) == 0 {
		return
	}
	group := rs[0].Group
	var idx []int
	lo, hi := math.Inf(1), 0.0
	for i, r := range rs {
		h := st.hists[i]
		if r.Group != group || h == nil || h.Count() == 0 {
			continue
		}
		idx = append(idx, i)
		for _, p := range h.CDF() {
			v := us(p.D)
			lo, hi = math.Min(lo, math.Max(v, 0.1)), math.Max(hi, v)
		}
	}
	if len(idx) == 0 {
		return
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	top, x0, x1 := float64(s.y+30), float64(left), float64(plotW-right)
	bottom := top + panelH - 60
	x := func(v float64) float64 {
		return x0 + (math.Log10(math.Max(v, lo))-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(x1-x0)
	}
	y := func(f float64) float64 { return bottom - f*(bottom-top) }
	s.text(plotW/2, top-12, "middle", "14", "latency CDF: "+group)
	s.axes(x0, x1, top, bottom)
	for _, t := range logTicks(lo, hi) {
		s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, x(t), top, x(t), bottom)
		s.text(x(t), bottom+14, "middle", "10", num(t))
	}
	for _, f := range []float64{0, 0.5, 0.9, 0.99, 1} {
		s.text(x0-4, y(f)+3, "end", "10", fmt.Sprint(f))
	}
	s.text((x0+x1)/2, bottom+30, "middle", "11", "latency, µs (log)")
	for k, i := range idx {
		col := palette[k%len(palette)]
		var pts []string
		prev := 0.0
		for _, p := range st.hists[i].CDF() {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(us(p.D)), y(prev), x(us(p.D)), y(p.Frac)))
			prev = p.Frac
		}
		s.f(`<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, col, strings.Join(pts, " "))
		r := rs[i]
		ly := top + 14*float64(k)
		s.f(`<rect x="10" y="%.1f" width="10" height="10" fill="%s"/>`, ly, col)
		s.text(24, ly+9, "start", "11", fmt.Sprintf("%s, %d goroutines", r.Label, r.Goroutines))
	}
	s.y = int(bottom) + 40
}

func (s *svg) axes(x0, x1, top, bottom float64) {
	s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, x0, bottom, x1, bottom)
	s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, x0, top, x0, bottom)
}

func (s *svg) barPanel(st *suite) {
	rs := st.rep.Results
	var best float64
	for _, r := range rs {
		best = math.Max(best, r.MBPerS)
	}
	if best == 0 {
		return
	}
	top, x0, x1 := float64(s.y+30), float64(left), float64(plotW-right-80)
	s.text(plotW/2, top-12, "middle", "14", "throughput, MB/s")
	const barH = 14
	group := ""
	yy := top
	for i, r := range rs {
		if r.Group != group {
			group = r.Group
			s.f(`<text x="10" y="%.1f" font-size="11" font-weight="bold">%s</text>`, yy+11, html.EscapeString(group))
			yy += barH + 2
		}
		w := r.MBPerS / best * (x1 - x0)
		col := palette[i%len(palette)]
		if r.Backend == "os.File" {
			col = "#999"
		}
		label := fmt.Sprintf("%s, G=%d, %s", r.Label, r.Goroutines, sizeShort(r.BlockSize))
		s.text(x0-6, yy+10, "end", "10", label)
		if r.Error != "" {
			s.text(x0+4, yy+10, "start", "10", "error")
		} else {
			s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/>`, x0, yy, math.Max(w, 1), barH-3, col)
			s.text(x0+w+4, yy+10, "start", "10", num(r.MBPerS))
		}
		yy += barH
	}
	s.y = int(yy) + 20
}

func (s *svg) fitPanel(st *suite) {
	m := st.rep.Model
	lo, hi := st.fit[0].n, st.fit[0].n
	var ymax float64
	for _, p := range st.fit {
		lo, hi, ymax = math.Min(lo, p.n), math.Max(hi, p.n), math.Max(ymax, p.us)
	}
	top, x0, x1 := float64(s.y+30), float64(left), float64(plotW-right)
	bottom := top + panelH - 60
	x := func(n float64) float64 {
		return x0 + (math.Log2(n)-math.Log2(lo))/(math.Log2(hi)-math.Log2(lo))*(x1-x0)
	}
	y := func(v float64) float64 { return bottom - v/(ymax*1.1)*(bottom-top) }
	s.text(plotW/2, top-12, "middle", "14", fmt.Sprintf("median random-read latency: t(n) = %.1f µs + %.5f µs/B × n", m.TqUs, m.TpUsPerByte))
	s.axes(x0, x1, top, bottom)
	for n := lo; n <= hi; n *= 4 {
		s.text(x(n), bottom+14, "middle", "10", sizeShort(int(n)))
	}
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		s.text(x0-4, y(f*ymax)+3, "end", "10", num(f*ymax))
	}
	s.text((x0+x1)/2, bottom+30, "middle", "11", "request size (log)")
	s.text(x0-40, top-4, "start", "10", "µs")
	var pts []string
	for n := lo; n <= hi; n *= 1.1 {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(n), y(m.TqUs+m.TpUsPerByte*n)))
	}
	s.f(`<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, palette[1], strings.Join(pts, " "))
	for _, p := range st.fit {
		s.f(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, x(p.n), y(p.us), palette[0])
	}
	s.y = int(bottom) + 40
}
