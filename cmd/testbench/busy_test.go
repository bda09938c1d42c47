//go:build linux

package main

import (
	"testing"
	"time"
)

// The busy processes are this binary re-executed: inside a measurement's
// child (which has runEnv set) they must still be busy processes, not
// measurements that would start busy processes of their own.
func TestBusyProcsInsideAChild(t *testing.T) {
	t.Setenv(runEnv, `{"not":"a run"}`)
	for _, kind := range busyKinds {
		stop, err := startBusy(kind)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		if rate := stop(); rate <= 0 {
			t.Errorf("-busy %s: %v hashes/s", kind, rate)
		}
	}
	if _, err := startBusy("bogus"); err == nil {
		t.Error("-busy bogus accepted")
	}
}
