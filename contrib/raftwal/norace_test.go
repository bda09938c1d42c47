//go:build !race

package raftwal_test

const raceEnabled = false
