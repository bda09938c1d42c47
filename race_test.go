//go:build linux && race

package diskio

// raceEnabled: under the race detector sync.Pool drops items on purpose, so
// allocation counts are meaningless.
const raceEnabled = true
