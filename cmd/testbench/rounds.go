//go:build linux

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/diskio-go/diskio/internal/bench"
)

// A row is one line of the table: a job, or fio's equivalent of one.
type row struct {
	job Job
	fio bool
}

// runAll runs the jobs in alternating rounds and appends one Result per
// row (and with -fio one more per set of compared rows, fio's figure for
// the set's first diskio job) in the jobs' order.
//
// On a shared disk one pass per row misleads: the disk's speed drifts by
// tens of percent within a minute, and whichever row runs first after the
// test file is written meets the disk still writing it back. So:
//   - an unmeasured warm-up (-warmup) runs the first job before anything
//     is measured, or, for a preset that sets warmRounds, every row runs
//     that many unmeasured rounds first;
//   - every row runs once per round (-rounds), each run lasting the row's
//     Duration divided by the rounds, so that the rows that are compared
//     (a set: one Group at one goroutine count) run side by side, ABAB...;
//   - each round starts each set at the next row (rotation), so no row is
//     always the one that runs first;
//   - a row reports the median of its rounds with its interval, and its
//     ratio to the set's baseline a Mann-Whitney test (stats.go).
//
// Each run happens in a child process of its own (isolate.go), so its OS
// thread count is its own; with -isolate=false (and -trace) threads made
// by one run stay for the next, whatever the order.
// -duration overrides the preset's durations.
func (s *suite) runAll(ctx context.Context, jobs []Job) error {
	rounds := max(1, s.c.rounds)
	for i := range jobs {
		if s.c.durSet || jobs[i].Duration == 0 {
			jobs[i].Duration = s.c.duration
		}
	}
	rows := s.rows(jobs)
	sets := setsOf(rows)
	s.e.prog.total += len(rows) * rounds

	if !s.warmed && s.c.warmup > 0 && len(jobs) > 0 {
		s.warmed = true
		s.e.prog.total++
		j := jobs[0]
		j.Duration = s.c.warmup
		j.Group = "warm-up (not measured): " + j.Group
		if _, err := s.runOne(ctx, row{job: j}); err != nil {
			return err
		}
	}

	results := make([]Result, len(rows))
	measured := make([][]Round, len(rows))
	hists := make([]*bench.Histogram, len(rows))
	failed := make([]bool, len(rows))
	for i, r := range rows {
		if r.fio {
			results[i] = s.e.fioResult(r.job)
		} else {
			results[i] = s.e.result(r.job)
		}
	}
	// With warmRounds, every row first runs that many unmeasured rounds
	// (the rotation counts them too).
	warm := s.warmRounds
	s.e.prog.total += len(rows) * warm
	for round := range warm + rounds {
		for _, set := range sets {
			for k := range set {
				// Rotation: round r starts the set at its r-th row.
				pos := (k + round) % len(set)
				i := set[pos]
				if failed[i] {
					continue
				}
				r := rows[i]
				r.job.Duration = max(time.Millisecond, r.job.Duration/time.Duration(rounds))
				s.e.prog.round = fmt.Sprintf("round %d/%d", round+1-warm, rounds)
				if round < warm {
					s.e.prog.round = fmt.Sprintf("warm-up round %d/%d", round+1, warm)
				}
				res, h := s.runRow(ctx, r)
				if err := ctx.Err(); err != nil {
					return err
				}
				if round < warm && res.Error == "" {
					continue // not measured; a failure counts
				}
				if res.Error != "" {
					failed[i] = true
					results[i].Error = res.Error
					continue
				}
				if res.Note != "" {
					results[i].Note = res.Note
				}
				results[i].Direct = res.Direct
				measured[i] = append(measured[i], roundOf(res, k))
				if h != nil {
					if hists[i] == nil {
						hists[i] = new(bench.Histogram)
					}
					hists[i].Merge(h)
				}
			}
		}
	}
	for i := range rows {
		r := results[i]
		if !failed[i] {
			r = aggregate(r, measured[i])
			if c, err := customOf(rows[i].job); err == nil && !rows[i].fio && c.note != nil {
				r.Note = c.note(r)
			}
		} else {
			r.Rounds = []Round{}
		}
		s.rep.Results = append(s.rep.Results, r)
		s.hists = append(s.hists, hists[i])
	}
	return nil
}

// rows lists the jobs and, with -fio, after each set of compared jobs
// fio's equivalent of the set's first diskio job (its first job if it has
// none).
func (s *suite) rows(jobs []Job) []row {
	var rows []row
	tmpl := -1
	for i, j := range jobs {
		rows = append(rows, row{job: j})
		if tmpl < 0 || jobs[tmpl].Group != j.Group || jobs[tmpl].G != j.G || !jobs[tmpl].diskio() && j.diskio() {
			tmpl = i
		}
		last := i == len(jobs)-1 || jobs[i+1].Group != j.Group || jobs[i+1].G != j.G
		if s.c.fio && last && hasFio(jobs[tmpl]) {
			rows = append(rows, row{job: jobs[tmpl], fio: true})
		}
	}
	return rows
}

// setsOf groups the rows that are compared with each other (consecutive
// rows of one Group at one goroutine count) into sets of indexes.
func setsOf(rows []row) [][]int {
	var sets [][]int
	for i, r := range rows {
		if i == 0 || r.job.Group != rows[i-1].job.Group || r.job.G != rows[i-1].job.G {
			sets = append(sets, nil)
		}
		sets[len(sets)-1] = append(sets[len(sets)-1], i)
	}
	return sets
}

// runRow runs one row once: a job in a child process (or in this one), or
// fio.
func (s *suite) runRow(ctx context.Context, r row) (Result, *bench.Histogram) {
	if r.fio {
		return s.e.runFio(ctx, r.job), nil
	}
	j := r.job
	if s.c.trace != "" && !j.diskio() {
		s.note("-trace: os.File runs are not traced (they have no scheduler)")
	}
	if s.c.isolate && s.c.trace == "" {
		return s.e.runIsolated(ctx, j)
	}
	return s.e.run(ctx, j)
}

// runOne runs r once and returns the error a failed run reports (the
// warm-up ignores what it measured).
func (s *suite) runOne(ctx context.Context, r row) (Result, error) {
	res, _ := s.runRow(ctx, r)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}
