//go:build linux && !race

package diskio

const raceEnabled = false
