//go:build linux

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"time"
)

// fitPoint is one request size and its median latency in microseconds.
type fitPoint struct {
	n  float64
	us float64
}

// fitLine is the least-squares fit y = a + b*x, with R².
func fitLine(pts []fitPoint) (a, b, r2 float64) {
	var sx, sy, sxx, sxy float64
	k := float64(len(pts))
	for _, p := range pts {
		sx += p.n
		sy += p.us
		sxx += p.n * p.n
		sxy += p.n * p.us
	}
	d := k*sxx - sx*sx
	if len(pts) < 2 || d == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	b = (k*sxy - sx*sy) / d
	a = (sy - b*sx) / k
	mean := sy / k
	var ssRes, ssTot float64
	for _, p := range pts {
		e := p.us - (a + b*p.n)
		ssRes += e * e
		ssTot += (p.us - mean) * (p.us - mean)
	}
	r2 = 1 - ssRes/ssTot
	return a, b, r2
}

// presetLatencyModel: the Czech blog's measurements (it fitted means; we
// fit medians, which a shared machine's stalls of tens of milliseconds do
// not drag). Random O_DIRECT
// reads of 512 B to 1 MiB at one goroutine (os.File: one pread per
// request, nothing in between), the fit t(n) = tq + tp*n, the kernel's
// read-ahead windows on a cold buffered file, and a stream depth sweep at
// the buffer size the fit suggests.
func presetLatencyModel(ctx context.Context, s *suite) error {
	c := s.c
	var jobs []Job
	const group = "random read latency vs size, 1 goroutine, O_DIRECT (os.File pread)"
	for bs := 512; bs <= 1<<20; bs *= 2 {
		j := c.job(group, "os.File", "randread", bs, 1, true)
		j.Label, j.Duration = sizeName(int64(bs)), 500*time.Millisecond
		j.Base = bs == 4096
		jobs = append(jobs, j)
	}
	first := len(s.rep.Results)
	if err := s.runAll(ctx, jobs); err != nil {
		return err
	}
	m := &LatencyModel{}
	var small, four float64
	for _, r := range s.rep.Results[first:] {
		if r.Error != "" || r.Backend == "fio" {
			continue
		}
		s.fit = append(s.fit, fitPoint{float64(r.BlockSize), r.Lat.P50})
		if r.BlockSize == 512 {
			small = r.Lat.P50
		}
		if r.BlockSize == 4096 {
			four = r.Lat.P50
		}
	}
	m.TqUs, m.TpUsPerByte, m.R2 = fitLine(s.fit)
	if four > 0 {
		m.SmallVs4KiB = small / four
	}

	m.ReadAheadKB = readAheadKB(s.e.path)
	ra, err := detectReadAhead(s.e.path, min(s.e.size, 32<<20))
	if err != nil {
		return err
	}
	m.WindowsKB, m.SeqHitRatio, m.StrideHitPct = ra.windowsKB, ra.seqHit, ra.strideHit

	// Buffer: where the fixed cost is a fifth of a request (tq = tp*b/4).
	m.BufferSize = 512 << 10
	if m.TqUs > 0 && m.TpUsPerByte > 0 {
		m.BufferSize = 1 << int(math.Ceil(math.Log2(4*m.TqUs/m.TpUsPerByte)))
		m.BufferSize = min(max(m.BufferSize, 64<<10), 8<<20)
	} else {
		s.note("latency-model: the fit has no positive tq and tp (noise?): the depth sweep uses 512 KiB")
	}
	sweep := fmt.Sprintf("scan with the suggested %s buffer, diskio uring StreamReader", sizeName(int64(m.BufferSize)))
	jobs = jobs[:0]
	for _, d := range []int{1, 2, 4, 8, 16, 32} {
		j := c.job(sweep, "uring", "read", m.BufferSize, 1, true)
		j.Stream, j.Buffer, j.ReadAhead, j.Base = true, m.BufferSize, d, d == 1
		j.Label, j.Duration = fmt.Sprintf("read-ahead %d", d), time.Second
		jobs = append(jobs, j)
	}
	first = len(s.rep.Results)
	if err := s.runAll(ctx, jobs); err != nil {
		return err
	}
	var best float64
	for _, r := range s.rep.Results[first:] {
		best = max(best, r.MBPerS)
	}
	for _, r := range s.rep.Results[first:] {
		if r.Backend != "fio" && r.Error == "" && r.MBPerS >= 0.9*best {
			m.Depth = depthOf(r.Label)
			break
		}
	}
	s.rep.Model = m
	return nil
}

func depthOf(label string) int {
	var d int
	fmt.Sscanf(label, "read-ahead %d", &d)
	return d
}

type readAhead struct {
	windowsKB []int
	seqHit    float64
	strideHit float64
}

// detectReadAhead reads the start of a cold file through the page cache
// 4 KiB at a time and notes which reads had to wait for the device: the
// distance between two waits is the window the kernel read ahead. Then it
// reads 4 KiB every 64 KiB (a stride), which the kernel does not take for
// a sequential stream, so it reads nothing ahead.
func detectReadAhead(path string, n int64) (readAhead, error) {
	var ra readAhead
	f, err := os.Open(path)
	if err != nil {
		return ra, err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	if err := dropCache(path); err != nil {
		return ra, err
	}
	type rd struct {
		off int64
		d   time.Duration
	}
	var seq []rd
	for off := int64(0); off+4096 <= n; off += 4096 {
		t0 := time.Now()
		if _, err := f.ReadAt(buf, off); err != nil {
			return ra, err
		}
		seq = append(seq, rd{off, time.Since(t0)})
	}
	// A cached read's cost, measured on the now cached first blocks.
	var hits []time.Duration
	for off := int64(0); off < min(n, 1<<20); off += 4096 {
		t0 := time.Now()
		f.ReadAt(buf, off)
		hits = append(hits, time.Since(t0))
	}
	slices.Sort(hits)
	threshold := max(8*time.Microsecond, 4*hits[len(hits)/2])
	var waits []int64
	var fast int
	for _, r := range seq {
		if r.d > threshold {
			waits = append(waits, r.off)
		} else {
			fast++
		}
	}
	ra.seqHit = float64(fast) / float64(len(seq))
	for i := 1; i < len(waits) && len(ra.windowsKB) < 12; i++ {
		ra.windowsKB = append(ra.windowsKB, int((waits[i]-waits[i-1])>>10))
	}
	if err := dropCache(path); err != nil {
		return ra, err
	}
	fast = 0
	var total int
	for off := int64(0); off+4096 <= n; off += 64 << 10 {
		t0 := time.Now()
		if _, err := f.ReadAt(buf, off); err != nil {
			return ra, err
		}
		if time.Since(t0) <= threshold {
			fast++
		}
		total++
	}
	ra.strideHit = float64(fast) / float64(total)
	return ra, nil
}
