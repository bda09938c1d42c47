//go:build race

package sched

// raceEnabled: under the race detector sync.Pool drops items on purpose, so
// allocation counts are meaningless.
const raceEnabled = true
