//go:build linux

package main

import (
	"context"
	"fmt"

	"github.com/diskio-go/diskio/internal/bench"
)

// A custom measurement is a run that is not one of exec's workloads (a
// WAL's appends, Glommio's phases): a preset names it in Job.Custom, and
// the Job (which serialises) carries its parameters, so that runAll gives
// it the same rounds, rotation, statistics and child process as any row.
// Job.Variant is the measurement's own parameter (a file kind, a phase),
// Job.Dir a directory of the preset's for its files.
type customRun struct {
	// prepare sets up what the run needs outside its process and its
	// time (the page cache), as env.prepare does; nil: nothing.
	prepare func(e *env, j Job) error
	// run measures j once, filling r (already j's description) and h.
	run func(ctx context.Context, e *env, j Job, r *Result, h *bench.Histogram) error
	// fioLabel names fio's row for j's set; "" (or fio nil): none.
	fioLabel func(j Job) string
	// fio runs fio's equivalent of j and returns its measurements.
	fio func(ctx context.Context, e *env, j Job) (Result, error)
	// fioBase makes fio's row the set's baseline for ratios; fioDirect
	// says its job uses O_DIRECT.
	fioBase, fioDirect bool
	// note, if set, makes a row's note from its medians (a round's
	// note would be one round's).
	note func(r Result) string
}

// customRuns maps Job.Custom to its measurement.
var customRuns = map[string]*customRun{
	"wal":        walCustom,     // preset_wal.go
	"glommio":    glommioCustom, // preset_glommio.go
	"cache-copy": copyHotCustom, // preset_cache.go
}

func customOf(j Job) (*customRun, error) {
	c, ok := customRuns[j.Custom]
	if !ok {
		return nil, fmt.Errorf("unknown custom measurement %q", j.Custom)
	}
	return c, nil
}

// hasFio reports whether j's set gets a fio row.
func hasFio(j Job) bool {
	if j.Custom == "" {
		return true
	}
	c, err := customOf(j)
	return err == nil && c.fio != nil && c.fioLabel != nil && c.fioLabel(j) != ""
}
