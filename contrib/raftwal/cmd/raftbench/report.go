package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

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

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// report prints, per layer, the median over rounds of each figure, and the
// median of the per-round ratios to the fs layer.
func report(out io.Writer, layers []string, cfg runConfig, results map[string][]*runResult) {
	base := results["fs"]
	fmt.Fprintf(out, "\nsummary: medians over rounds (ratio: median of per-round ratios to fs)\n")
	for pi, n := range cfg.clients {
		fmt.Fprintf(out, "%d clients\n", n)
		fmt.Fprintf(out, "  %-9s %10s %7s %9s %7s %9s %7s %8s\n", "layer", "applies/s", "ratio", "p50 ms", "ratio", "p99 ms", "ratio", "threads")
		for _, layer := range layers {
			var rate, p50, p99, rr, r50, r99, thr []float64
			for i, res := range results[layer] {
				if pi >= len(res.phases) {
					continue
				}
				p := res.phases[pi]
				rate = append(rate, p.rate)
				p50 = append(p50, ms(p.p50))
				p99 = append(p99, ms(p.p99))
				thr = append(thr, float64(slices.Max(p.threads)))
				if i < len(base) && pi < len(base[i].phases) {
					b := base[i].phases[pi]
					rr = append(rr, p.rate/b.rate)
					r50 = append(r50, ms(p.p50)/ms(b.p50))
					r99 = append(r99, ms(p.p99)/ms(b.p99))
				}
			}
			fmt.Fprintf(out, "  %-9s %10.0f %6.2fx %9.2f %6.2fx %9.2f %6.2fx %8.0f\n", layer, median(rate), median(rr), median(p50), median(r50), median(p99), median(r99), median(thr))
		}
	}
	if cfg.kills > 0 {
		fmt.Fprintf(out, "kills (medians over all kills of all rounds)\n")
		fmt.Fprintf(out, "  %-9s %6s %12s %18s %18s %8s %12s\n", "layer", "kills", "elect ms", "catch-up ms (fol.)", "catch-up ms (ldr)", "threads", "acked/lost")
		for _, layer := range layers {
			var el, cf, cl, thr []float64
			kills, acked, lost := 0, 0, 0
			for _, res := range results[layer] {
				for _, k := range res.kills {
					kills++
					if k.leader {
						el = append(el, ms(k.elect))
						cl = append(cl, ms(k.catchup))
					} else {
						cf = append(cf, ms(k.catchup))
					}
				}
				if len(res.killThreads) > 0 {
					thr = append(thr, float64(slices.Max(res.killThreads)))
				}
				acked += res.acked
				lost += res.lost
			}
			fmt.Fprintf(out, "  %-9s %6d %12.0f %18.0f %18.0f %8.0f %6d/%d\n", layer, kills, median(el), median(cf), median(cl), median(thr), acked, lost)
		}
	}
	fmt.Fprintf(out, "checks\n")
	for _, layer := range layers {
		for i, res := range results[layer] {
			fmt.Fprintf(out, "  %-9s round %d: acknowledged %d, applied %d, lost %d, duplicated %d, damaged %d, FSMs equal %v, kills %d\n",
				layer, i+1, res.acked, res.applied, res.lost, res.dups, res.bad, res.fsmsEqual, len(res.kills))
		}
	}
}
