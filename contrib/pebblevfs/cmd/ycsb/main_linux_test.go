//go:build linux

package main

import (
	"testing"

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
