package main

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/diskio-go/diskio/internal/testenv"
)

// TestMain makes the test binary a node when the cluster starts it as one.
func TestMain(m *testing.M) {
	if os.Getenv(nodeEnv) == "1" {
		if err := runNode(os.Args[1:]); err != nil {
			os.Stderr.WriteString("raftbench node: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	testenv.InstallFilter() // DISKIO_TEST_SECCOMP
	os.Exit(m.Run())
}

// TestClusterKills runs a 3-process cluster on each layer under load from
// 32 clients, SIGKILLs a follower, the leader, a follower and the leader, restarts them from
// their disks, and checks that every acknowledged entry was applied once on
// every node and that the FSMs agree. RAFTBENCH_LONG=1 makes it the long
// run: 6 kills and at least 100,000 acknowledged entries per layer.
func TestClusterKills(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the cluster")
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc/<pid>/task: the cluster counts threads there (Linux)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := runConfig{nodes: 3, kills: 4, killClients: 32, killEvery: 2 * time.Second, downtime: 500 * time.Millisecond,
		timeout: 3 * time.Minute, nodeArgs: []string{"-snapshot-threshold", "2048", "-segment-size", strconv.Itoa(1 << 20)},
		logf: t.Logf}
	layers := []string{"pagecache", "direct"}
	if os.Getenv("RAFTBENCH_LONG") == "1" {
		cfg.kills, cfg.killClients, cfg.killEvery, cfg.minEntries, cfg.timeout = 6, 64, 4*time.Second, 100000, 10*time.Minute
		layers = append(layers, "fs")
	}
	for _, layer := range layers {
		t.Run(layer, func(t *testing.T) {
			res, err := runCluster(exe, layer, t.TempDir(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.kills) != cfg.kills || !res.kills[1].leader {
				t.Fatalf("kills: %+v", res.kills)
			}
			if res.acked == 0 || !res.ok() {
				t.Fatalf("check: %+v", res)
			}
			if res.acked < cfg.minEntries {
				t.Fatalf("%d entries acknowledged, want %d", res.acked, cfg.minEntries)
			}
		})
	}
}
