// Command dashpng draws a Grafana dashboard's time-series panels as one
// PNG, from a Prometheus server's answers to the panels' own queries
// (query_range over a time window): the picture of dashboards/diskio.json
// in the README is drawn with it from a real run, without Grafana.
//
//	go run ./cmd/dashpng -prom http://127.0.0.1:9090 -from 2026-11-28T03:30:00Z -to 2026-11-28T03:34:00Z \
//		-dashboard dashboards/diskio.json -o docs/dashboard.png
//
// Grafana's variables are given values: $instance matches every instance,
// $__rate_interval is -rate.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"log"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

type dashboard struct {
	Title  string `json:"title"`
	Panels []struct {
		Title       string `json:"title"`
		FieldConfig struct {
			Defaults struct {
				Unit string `json:"unit"`
			} `json:"defaults"`
		} `json:"fieldConfig"`
		GridPos struct{ X, Y int } `json:"gridPos"`
		Targets []struct {
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

type series struct {
	name string
	xy   plotter.XYs
}

func main() {
	prom := flag.String("prom", "http://127.0.0.1:9090", "Prometheus server")
	file := flag.String("dashboard", "dashboards/diskio.json", "Grafana dashboard JSON")
	fromS := flag.String("from", "", "window start (RFC 3339)")
	toS := flag.String("to", "", "window end (RFC 3339)")
	step := flag.Duration("step", 2*time.Second, "query resolution")
	rate := flag.String("rate", "15s", "the value of $__rate_interval")
	out := flag.String("o", "dashboard.png", "the PNG to write")
	cols := flag.Int("cols", 3, "panels per row")
	flag.Parse()
	from, err := time.Parse(time.RFC3339, *fromS)
	if err != nil {
		log.Fatalf("-from: %v", err)
	}
	to, err := time.Parse(time.RFC3339, *toS)
	if err != nil {
		log.Fatalf("-to: %v", err)
	}
	b, err := os.ReadFile(*file)
	if err != nil {
		log.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		log.Fatalf("%s: %v", *file, err)
	}
	sort.SliceStable(d.Panels, func(i, j int) bool {
		a, b := d.Panels[i].GridPos, d.Panels[j].GridPos
		return a.Y < b.Y || a.Y == b.Y && a.X < b.X
	})
	var plots []*plot.Plot
	for _, p := range d.Panels {
		pl := plot.New()
		pl.Title.Text = p.Title
		pl.Title.TextStyle.Font.Size = vg.Points(11)
		pl.X.Label.Text = "seconds from " + from.UTC().Format("15:04:05") + " UTC"
		pl.Y.Label.Text = unitLabel(p.FieldConfig.Defaults.Unit)
		pl.Legend.Top = true
		pl.Legend.TextStyle.Font.Size = vg.Points(8)
		pl.Add(plotter.NewGrid())
		i := 0
		for _, t := range p.Targets {
			expr := strings.ReplaceAll(t.Expr, "$__rate_interval", *rate)
			expr = strings.ReplaceAll(expr, "$instance", ".*")
			ss, err := queryRange(*prom, expr, from, to, *step, t.LegendFormat)
			if err != nil {
				log.Fatalf("%s: %q: %v", p.Title, expr, err)
			}
			for _, s := range ss {
				l, err := plotter.NewLine(s.xy)
				if err != nil {
					log.Fatal(err)
				}
				l.Color = palette[i%len(palette)]
				l.Width = vg.Points(1.2)
				i++
				pl.Add(l)
				pl.Legend.Add(s.name, l)
			}
		}
		pl.X.Min, pl.X.Max = 0, to.Sub(from).Seconds()
		if pl.Y.Min > 0 {
			pl.Y.Min = 0
		}
		pl.Y.Max += 0.25 * (pl.Y.Max - pl.Y.Min) // room for the legend
		plots = append(plots, pl)
	}
	rows := (len(plots) + *cols - 1) / *cols
	const w, h = 6 * vg.Inch, 3.4 * vg.Inch
	img := vgimg.New(w*vg.Length(*cols), h*vg.Length(rows)+0.4*vg.Inch)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	top := draw.Crop(dc, 0, 0, 0, -0.4*vg.Inch)
	tiles := draw.Tiles{Rows: rows, Cols: *cols, PadX: vg.Points(8), PadY: vg.Points(8), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, *cols)
		for c := range grid[r] {
			if k := r**cols + c; k < len(plots) {
				grid[r][c] = plots[k]
			}
		}
	}
	canvases := plot.Align(grid, tiles, top)
	for r := range grid {
		for c := range grid[r] {
			if grid[r][c] != nil {
				grid[r][c].Draw(canvases[r][c])
			}
		}
	}
	title := fmt.Sprintf("%s: %s to %s UTC", d.Title, from.UTC().Format("2006-01-02 15:04:05"), to.UTC().Format("15:04:05"))
	sty := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, XAlign: draw.XLeft, YAlign: draw.YTop}
	sty.Font.Size = vg.Points(14)
	sty.Handler = plot.DefaultTextHandler
	dc.FillText(sty, vg.Point{X: 0.15 * vg.Inch, Y: dc.Max.Y - 0.1*vg.Inch}, title)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, color.RGBA{0x17, 0xbe, 0xcf, 0xff},
}

func unitLabel(u string) string {
	switch u {
	case "s":
		return "seconds"
	case "Bps":
		return "bytes/s"
	case "reqps":
		return "requests/s"
	}
	return ""
}

var legendVar = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

// queryRange runs a range query and returns its series, named by the
// legend format.
func queryRange(prom, expr string, from, to time.Time, step time.Duration, legend string) ([]series, error) {
	q := url.Values{"query": {expr}, "start": {from.Format(time.RFC3339)}, "end": {to.Format(time.RFC3339)}, "step": {step.String()}}
	resp, err := http.Get(prom + "/api/v1/query_range?" + q.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s", r.Error)
	}
	var out []series
	for _, res := range r.Data.Result {
		name := legendVar.ReplaceAllStringFunc(legend, func(m string) string {
			return res.Metric[legendVar.FindStringSubmatch(m)[1]]
		})
		var xy plotter.XYs
		for _, v := range res.Values {
			t, _ := v[0].(float64)
			y, err := strconv.ParseFloat(v[1].(string), 64)
			if err != nil || math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			xy = append(xy, plotter.XY{X: t - float64(from.Unix()), Y: y})
		}
		if len(xy) > 0 {
			out = append(out, series{name, xy})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}
