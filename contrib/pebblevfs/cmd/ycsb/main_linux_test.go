//go:build linux

package main

import (
	"testing"
	"time"

	"github.com/diskio-go/diskio/contrib/pebblevfs"
)

func TestParseFS(t *testing.T) {
	c, err := parseFS("diskio-buffered-dsync-ra3", pebblevfs.Direct)
	if err != nil || c.mode != pebblevfs.Buffered || !c.dsync || c.readAhead != 3 {
		t.Errorf("diskio-buffered-dsync-ra3: %+v, %v", c, err)
	}
	if c, _ := parseFS("diskio", pebblevfs.Buffered); c.mode != pebblevfs.Buffered {
		t.Errorf("diskio does not take -mode: %+v", c)
	}
	for _, bad := range []string{"os", "diskio-ra", "diskio-ra0", "diskio-fast"} {
		if _, err := parseFS(bad, pebblevfs.Direct); err == nil {
			t.Errorf("-fs %s accepted", bad)
		}
	}
}

// -fs mem runs a phase on Pebble's memory file system; a workload phase
// loads its own database first, as a fresh process has an empty one.
func TestMemPhases(t *testing.T) {
	if c, err := parseFS("mem", pebblevfs.Direct); err != nil {
		t.Fatalf("mem: %+v, %v", c, err)
	}
	for _, phase := range []string{"mem/load", "mem/A"} {
		c := config{dir: t.TempDir(), records: 2000, valueSize: 100, duration: 100 * time.Millisecond,
			concurrency: 4, cache: 8 << 20, diskioCache: 8 << 20, mode: "direct", sync: true, child: phase}
		if err := runChild(c); err != nil {
			t.Fatalf("%s: %v", phase, err)
		}
	}
}
