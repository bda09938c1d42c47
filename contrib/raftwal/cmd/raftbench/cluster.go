package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// cluster is n raft nodes, each its own process of this program, on
// loopback addresses.
type cluster struct {
	exe   string
	layer string
	dir   string
	args  []string // extra node flags

	raft, apply, ctl []string

	mu    sync.Mutex
	procs []*exec.Cmd
	peak  []int // peak OS threads per node, over the cluster's life
	watch bool  // sample threads

	http *http.Client
	stop chan struct{}
	done chan struct{}
}

// freeAddrs returns n loopback addresses with ports free now.
func freeAddrs(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

func newCluster(exe, layer, dir string, n int, args []string) (*cluster, error) {
	addrs, err := freeAddrs(3 * n)
	if err != nil {
		return nil, err
	}
	c := &cluster{exe: exe, layer: layer, dir: dir, args: args,
		raft: addrs[:n], apply: addrs[n : 2*n], ctl: addrs[2*n:],
		procs: make([]*exec.Cmd, n), peak: make([]int, n),
		http: &http.Client{Timeout: 2 * time.Second},
		stop: make(chan struct{}), done: make(chan struct{})}
	for i := range n {
		if err := c.start(i); err != nil {
			c.close()
			return nil, err
		}
	}
	go c.sample()
	return c, nil
}

func (c *cluster) n() int { return len(c.raft) }

func (c *cluster) start(i int) error {
	peers := ""
	for j, a := range c.raft {
		if j > 0 {
			peers += ","
		}
		peers += a
	}
	args := append([]string{"-id", strconv.Itoa(i), "-dir", filepath.Join(c.dir, fmt.Sprintf("node%d", i)),
		"-layer", c.layer, "-peers", peers, "-apply", c.apply[i], "-ctl", c.ctl[i]}, c.args...)
	cmd := exec.Command(c.exe, args...)
	cmd.Env = append(os.Environ(), nodeEnv+"=1")
	out, err := os.OpenFile(filepath.Join(c.dir, fmt.Sprintf("node%d.out", i)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	out.Close()
	c.mu.Lock()
	c.procs[i] = cmd
	c.mu.Unlock()
	return nil
}

// kill SIGKILLs node i and waits for it.
func (c *cluster) kill(i int) {
	c.mu.Lock()
	cmd := c.procs[i]
	c.procs[i] = nil
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

func (c *cluster) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	for i := range c.procs {
		c.kill(i)
	}
}

// sample records each node's OS threads (/proc/<pid>/task) every 20 ms.
func (c *cluster) sample() {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.mu.Lock()
		for i, cmd := range c.procs {
			if cmd == nil || !c.watch {
				continue
			}
			if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", cmd.Process.Pid)); err == nil && len(ents) > c.peak[i] {
				c.peak[i] = len(ents)
			}
		}
		c.mu.Unlock()
	}
}

// watchThreads starts (or stops) sampling, from zero.
func (c *cluster) watchThreads(on bool) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := append([]int(nil), c.peak...)
	if on {
		clear(c.peak)
	}
	c.watch = on
	return p
}

func (c *cluster) status(i int) (nodeStatus, error) {
	var st nodeStatus
	resp, err := c.http.Get("http://" + c.ctl[i] + "/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

func (c *cluster) ids(i int) ([]uint64, error) {
	cl := &http.Client{Timeout: 30 * time.Second}
	resp, err := cl.Get("http://" + c.ctl[i] + "/ids")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, len(b)/8)
	for j := range ids {
		ids[j] = binary.LittleEndian.Uint64(b[8*j:])
	}
	return ids, nil
}

func (c *cluster) barrier(i int) error {
	cl := &http.Client{Timeout: 15 * time.Second}
	resp, err := cl.Get("http://" + c.ctl[i] + "/barrier")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("barrier: %s", resp.Status)
	}
	return nil
}

// leader waits until a node other than skip reports itself leader, and
// returns it.
func (c *cluster) leader(skip int, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for i := range c.n() {
			if i == skip {
				continue
			}
			if st, err := c.status(i); err == nil && st.State == "Leader" {
				return i, nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return -1, fmt.Errorf("no leader within %v", timeout)
}
