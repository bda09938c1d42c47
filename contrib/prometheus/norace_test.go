//go:build !race

package diskioprom

const raceEnabled = false
