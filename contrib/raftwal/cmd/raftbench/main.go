// Command raftbench runs a hashicorp/raft cluster on raft-wal, each node its
// own process on loopback TCP, with raft-wal's segment files on diskio
// (contrib/raftwal, page-cache or direct mode) or on raft-wal's own file
// layer, and measures and checks it.
//
// For each layer and round it starts a fresh cluster (3 nodes; raft-wal as
// LogStore and StableStore, a file snapshot store, an FSM keeping the set
// of ids it applied and a checksum of the log applied), then:
//
//   - for each -clients count, applies entries from that many concurrent
//     clients for -warm plus -phase, and reports applies/s, p50 and p99
//     apply latency over the -phase window, and each node's peak OS threads
//     (/proc/<pid>/task);
//   - with -kills k, applies from -kill-clients clients while it SIGKILLs
//     a follower, then the leader, in turn, every -kill-every, restarting
//     each from its disk after -downtime, and reports how long the election
//     took and how long the node took to catch up after its restart; it
//     keeps the load on until -min-entries entries were acknowledged;
//   - stops the load, waits until every node applied the same log, and
//     checks that every acknowledged entry is in every node's FSM, that no
//     entry was applied twice or damaged, and that every FSM's checksum
//     is equal.
//
// Layers alternate their order from round to round; the summary gives the
// median of each figure over the rounds and the median of the per-round
// ratios to raft-wal's own layer (fs). The exit status is 1 if any check
// failed. Every address is on loopback; every loop is bounded by -timeout.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// nodeEnv, set in a child's environment, makes it a node.
const nodeEnv = "RAFTBENCH_NODE"

func main() {
	if os.Getenv(nodeEnv) == "1" {
		if err := runNode(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "raftbench node:", err)
			os.Exit(1)
		}
		return
	}
	if err := bench(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "raftbench:", err)
		os.Exit(1)
	}
}

func bench(args []string, out *os.File) error {
	fl := flag.NewFlagSet("raftbench", flag.ExitOnError)
	dir := fl.String("dir", "", "directory for the nodes' data (removed afterwards unless -keep); must allow O_DIRECT for -layers direct")
	layers := fl.String("layers", "fs,pagecache,direct", "segment file layers: fs (raft-wal's own), pagecache, pagecache+tail (Options.TailCache), direct (contrib/raftwal)")
	rounds := fl.Int("rounds", 3, "rounds; each starts a fresh cluster per layer")
	clients := fl.String("clients", "1,16,256", "client counts measured, comma-separated (empty: none)")
	warm := fl.Duration("warm", time.Second, "warm-up before each measured phase")
	phase := fl.Duration("phase", 5*time.Second, "measured phase per client count")
	kills := fl.Int("kills", 2, "SIGKILLs per cluster (a follower, then the leader, in turn)")
	killClients := fl.Int("kill-clients", 64, "clients applying during the kills")
	killEvery := fl.Duration("kill-every", 3*time.Second, "load between kills")
	downtime := fl.Duration("downtime", time.Second, "how long a killed node stays down")
	minEntries := fl.Int("min-entries", 0, "keep the kill phase's load on until this many entries were acknowledged in the run")
	timeout := fl.Duration("timeout", 10*time.Minute, "bound of one cluster's run")
	nodes := fl.Int("nodes", 3, "nodes per cluster (3 or 5)")
	segSize := fl.Int("segment-size", 0, "raft-wal segment size in bytes (0: raft-wal's default, 64 MiB)")
	snapEvery := fl.Int("snapshot-threshold", 8192, "raft SnapshotThreshold")
	keep := fl.Bool("keep", false, "keep the nodes' data")
	fl.Parse(args)
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cfg := runConfig{nodes: *nodes, warm: *warm, phase: *phase, kills: *kills, killClients: *killClients,
		killEvery: *killEvery, downtime: *downtime, minEntries: *minEntries, timeout: *timeout,
		nodeArgs: []string{"-segment-size", strconv.Itoa(*segSize), "-snapshot-threshold", strconv.Itoa(*snapEvery)},
		logf:     func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }}
	for _, s := range strings.Split(*clients, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("bad -clients %q", *clients)
		}
		cfg.clients = append(cfg.clients, n)
	}
	ls := strings.Split(*layers, ",")
	results := map[string][]*runResult{}
	failed := false
	for r := range *rounds {
		fmt.Fprintf(out, "round %d\n", r+1)
		for j := range ls {
			layer := ls[(j+r)%len(ls)]
			d := filepath.Join(*dir, fmt.Sprintf("r%d-%s", r+1, layer))
			res, err := runCluster(exe, layer, d, cfg)
			if !*keep {
				os.RemoveAll(d)
			}
			if err != nil {
				fmt.Fprintf(out, "  %-9s FAILED: %v\n", layer, err)
				failed = true
				if res == nil {
					continue
				}
			}
			results[layer] = append(results[layer], res)
		}
	}
	report(out, ls, cfg, results)
	if failed {
		return fmt.Errorf("a check failed")
	}
	return nil
}
