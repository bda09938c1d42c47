package main

import (
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"
)

type runConfig struct {
	nodes       int
	clients     []int
	warm, phase time.Duration
	kills       int
	killClients int
	killEvery   time.Duration
	downtime    time.Duration
	minEntries  int
	timeout     time.Duration
	nodeArgs    []string
	logf        func(format string, args ...any)
}

type phaseResult struct {
	clients  int
	rate     float64
	p50, p99 time.Duration
	threads  []int // peak per node
}

type killResult struct {
	leader         bool
	victim         int
	elect, catchup time.Duration
}

type runResult struct {
	layer       string
	phases      []phaseResult
	kills       []killResult
	killThreads []int // peak per node during the kill phase
	acked       int   // entries acknowledged to clients
	applied     int   // entries in every FSM
	lost, dups  int   // acknowledged entries missing on some node; entries applied twice
	bad         int   // entries with a damaged payload
	fsmsEqual   bool
}

func (r *runResult) ok() bool {
	return r.lost == 0 && r.dups == 0 && r.bad == 0 && r.fsmsEqual && r.applied >= r.acked
}

// runCluster starts a fresh cluster of layer in dir, measures each client
// count's phase, kills and restarts nodes under load, and checks the FSMs.
func runCluster(exe, layer, dir string, cfg runConfig) (*runResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c, err := newCluster(exe, layer, dir, cfg.nodes, cfg.nodeArgs)
	if err != nil {
		return nil, err
	}
	defer c.close()
	res := &runResult{layer: layer}
	var nextID atomic.Uint64
	var allAcked []uint64
	end := time.Now().Add(cfg.timeout)

	ldr, err := c.leader(-1, 30*time.Second)
	if err != nil {
		return nil, err
	}
	for _, n := range cfg.clients {
		c.watchThreads(true)
		l := startLoad(c, &nextID, n, end)
		l.hint.Store(int32(ldr))
		t0 := time.Now()
		time.Sleep(cfg.warm + cfg.phase)
		l.stop()
		p := phaseResult{clients: n, threads: c.watchThreads(false)}
		p.rate, p.p50, p.p99, _ = l.window(t0.Add(cfg.warm), t0.Add(cfg.warm+cfg.phase))
		allAcked = append(allAcked, l.acked...)
		res.phases = append(res.phases, p)
		cfg.logf("  %-9s %4d clients: %8.0f applies/s  p50 %v  p99 %v  threads %v", layer, n, p.rate, p.p50.Round(time.Microsecond), p.p99.Round(time.Microsecond), p.threads)
		if time.Now().After(end) {
			return nil, fmt.Errorf("timeout")
		}
	}

	if cfg.kills > 0 || cfg.minEntries > len(allAcked) {
		c.watchThreads(true)
		l := startLoad(c, &nextID, cfg.killClients, end)
		l.hint.Store(int32(ldr))
		for k := 0; k < cfg.kills; k++ {
			time.Sleep(cfg.killEvery)
			ldr, err := c.leader(-1, 30*time.Second)
			if err != nil {
				l.stop()
				return nil, err
			}
			kr := killResult{leader: k%2 == 1, victim: ldr}
			if !kr.leader {
				kr.victim = (ldr + 1 + (k/2)%(cfg.nodes-1)) % cfg.nodes
			}
			t0 := time.Now()
			c.kill(kr.victim)
			if kr.leader {
				if _, err := c.leader(kr.victim, 30*time.Second); err != nil {
					l.stop()
					return nil, fmt.Errorf("after killing leader %d: %w", kr.victim, err)
				}
				kr.elect = time.Since(t0)
			}
			time.Sleep(cfg.downtime)
			t1 := time.Now()
			if err := c.start(kr.victim); err != nil {
				l.stop()
				return nil, err
			}
			ldr, err = c.leader(kr.victim, 30*time.Second)
			if err != nil {
				l.stop()
				return nil, err
			}
			st, err := c.status(ldr)
			if err != nil {
				l.stop()
				return nil, err
			}
			for {
				vs, err := c.status(kr.victim)
				if err == nil && vs.AppliedIndex >= st.CommitIndex {
					break
				}
				if time.Since(t1) > 60*time.Second {
					l.stop()
					return nil, fmt.Errorf("node %d did not catch up to %d within 60 s", kr.victim, st.CommitIndex)
				}
				time.Sleep(5 * time.Millisecond)
			}
			kr.catchup = time.Since(t1)
			res.kills = append(res.kills, kr)
			role := "follower"
			if kr.leader {
				role = "leader"
			}
			cfg.logf("  %-9s kill %d: %s node %d, elected in %v, caught up %v after restart (%d acknowledged so far)",
				layer, k+1, role, kr.victim, kr.elect.Round(time.Millisecond), kr.catchup.Round(time.Millisecond), len(allAcked)+int(l.nAcked.Load()))
		}
		for len(allAcked)+int(l.nAcked.Load()) < cfg.minEntries && time.Now().Before(end) {
			time.Sleep(100 * time.Millisecond)
		}
		l.stop()
		res.killThreads = c.watchThreads(false)
		allAcked = append(allAcked, l.acked...)
	}
	res.acked = len(allAcked)
	return res, verify(c, res, allAcked, cfg)
}

// verify waits until every node applied the same log, then checks that
// each holds every acknowledged entry, none twice, and the same checksum.
func verify(c *cluster, res *runResult, acked []uint64, cfg runConfig) error {
	deadline := time.Now().Add(90 * time.Second)
	var sts []nodeStatus
	var err error
	// One barrier on the leader: when it returns, the leader applied
	// every entry before it; the followers learn the commit index at the
	// leader's next replication (CommitTimeout).
	for {
		var ldr int
		if ldr, err = c.leader(-1, 30*time.Second); err == nil {
			if err = c.barrier(ldr); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no barrier on a leader: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		sts = sts[:0]
		for i := range c.n() {
			st, serr := c.status(i)
			if serr != nil {
				err = serr
				break
			}
			sts = append(sts, st)
		}
		if len(sts) == c.n() {
			same := true
			for _, st := range sts {
				same = same && st.FSMApplied == sts[0].FSMApplied
			}
			if same {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the nodes did not converge: %+v (last error %v)", sts, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res.fsmsEqual = true
	slices.Sort(acked)
	for i, st := range sts {
		res.fsmsEqual = res.fsmsEqual && st.Sum == sts[0].Sum && st.Count == sts[0].Count
		res.dups = max(res.dups, int(st.Dups))
		res.bad = max(res.bad, int(st.Bad))
		ids, err := c.ids(i)
		if err != nil {
			return err
		}
		if len(ids) != st.Count {
			return fmt.Errorf("node %d: /ids gave %d, status %d", i, len(ids), st.Count)
		}
		lost := 0
		for _, id := range acked {
			if _, found := slices.BinarySearch(ids, id); !found {
				lost++
			}
		}
		res.lost = max(res.lost, lost)
		if i == 0 {
			res.applied = len(ids)
		}
	}
	cfg.logf("  %-9s check: %d acknowledged, %d applied on every node (index %d), lost %d, duplicated %d, damaged %d, FSMs equal %v (checksum %016x)",
		res.layer, res.acked, res.applied, sts[0].AppliedIndex, res.lost, res.dups, res.bad, res.fsmsEqual, sts[0].Sum)
	if !res.ok() {
		return fmt.Errorf("%s: check failed", res.layer)
	}
	return nil
}
