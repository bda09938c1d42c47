package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/contrib/raftwal"
)

// entrySize is the size of one entry's data: an 8-byte id and a payload
// derived from it, so the FSM can tell a damaged entry.
const entrySize = 128

func entryData(id uint64) []byte {
	b := make([]byte, entrySize)
	binary.LittleEndian.PutUint64(b, id)
	x := id*0x9E3779B97F4A7C15 + 1
	for i := 8; i < entrySize; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(b[i:], x)
	}
	return b
}

// fsm applies entries: it keeps the set of ids applied, counts ids applied
// twice and entries whose payload is wrong, and a checksum of every
// (index, id) applied in order, which nodes that applied the same log
// share.
type fsm struct {
	mu      sync.Mutex
	ids     map[uint64]struct{}
	sum     uint64
	dups    int64
	bad     int64
	applied uint64 // raft index of the last entry applied
}

func newFSM() *fsm { return &fsm{ids: make(map[uint64]struct{}), sum: 14695981039346656037} }

func (f *fsm) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = l.Index
	if len(l.Data) != entrySize {
		f.bad++
		return nil
	}
	id := binary.LittleEndian.Uint64(l.Data)
	if string(l.Data) != string(entryData(id)) {
		f.bad++
		return nil
	}
	if _, ok := f.ids[id]; ok {
		f.dups++
	}
	f.ids[id] = struct{}{}
	h := fnv.New64a()
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], f.sum)
	binary.LittleEndian.PutUint64(b[8:], l.Index)
	binary.LittleEndian.PutUint64(b[16:], id)
	h.Write(b[:])
	f.sum = h.Sum64()
	return nil
}

type fsmState struct {
	Sum, Applied uint64
	Dups, Bad    int64
	IDs          []uint64
}

func (f *fsm) state() fsmState {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := fsmState{Sum: f.sum, Applied: f.applied, Dups: f.dups, Bad: f.bad, IDs: make([]uint64, 0, len(f.ids))}
	for id := range f.ids {
		s.IDs = append(s.IDs, id)
	}
	slices.Sort(s.IDs)
	return s
}

func (f *fsm) Snapshot() (raft.FSMSnapshot, error) { return snapshot(f.state()), nil }

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var s fsmState
	if err := json.NewDecoder(bufio.NewReader(rc)).Decode(&s); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids = make(map[uint64]struct{}, len(s.IDs))
	for _, id := range s.IDs {
		f.ids[id] = struct{}{}
	}
	f.sum, f.applied, f.dups, f.bad = s.Sum, s.Applied, s.Dups, s.Bad
	return nil
}

type snapshot fsmState

func (s snapshot) Persist(sink raft.SnapshotSink) error {
	w := bufio.NewWriter(sink)
	if err := json.NewEncoder(w).Encode(fsmState(s)); err != nil {
		sink.Cancel()
		return err
	}
	if err := w.Flush(); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (snapshot) Release() {}

// nodeStatus is what a node's /status answers.
type nodeStatus struct {
	ID           string
	State        string
	Leader       string // raft address
	LastIndex    uint64
	CommitIndex  uint64
	AppliedIndex uint64
	FSMApplied   uint64
	Sum          uint64
	Count        int
	Dups, Bad    int64
}

// runNode runs one raft node until it is killed.
func runNode(args []string) error {
	fl := flag.NewFlagSet("node", flag.ExitOnError)
	id := fl.Int("id", 0, "node number (0-based)")
	dir := fl.String("dir", "", "data directory")
	layer := fl.String("layer", "pagecache", "segment file layer: fs (raft-wal's own), pagecache, pagecache+tail (with Options.TailCache), direct")
	peers := fl.String("peers", "", "comma-separated raft addresses of all nodes, this one's at -id")
	applyAddr := fl.String("apply", "", "address clients apply entries at")
	ctlAddr := fl.String("ctl", "", "address of the control HTTP server")
	snapEvery := fl.Uint64("snapshot-threshold", 8192, "entries between snapshots")
	trailing := fl.Uint64("trailing-logs", 10240, "entries kept after a snapshot")
	segSize := fl.Int("segment-size", 0, "raft-wal segment size (0: its default, 64 MiB)")
	fl.Parse(args)

	addrs := strings.Split(*peers, ",")
	if *id < 0 || *id >= len(addrs) {
		return fmt.Errorf("-id %d out of range of -peers", *id)
	}
	for _, a := range append(slices.Clone(addrs), *applyAddr, *ctlAddr) {
		if !loopback(a) {
			return fmt.Errorf("address %q is not a loopback address", a)
		}
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	logOut, err := os.OpenFile(filepath.Join(*dir, "node.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: fmt.Sprintf("node%d", *id), Output: logOut, Level: hclog.Warn})
	log.SetOutput(logOut)

	walDir := filepath.Join(*dir, "wal")
	if err := os.MkdirAll(walDir, 0o755); err != nil {
		return err
	}
	var sf types.SegmentFiler // nil: raft-wal's own fs
	switch *layer {
	case "fs":
	case "pagecache", "direct":
		var m diskio.DirectMode
		if err := m.UnmarshalText([]byte(*layer)); err != nil {
			return err
		}
		sf = segment.NewFiler(walDir, raftwal.New(raftwal.Options{Mode: m}))
	case "pagecache+tail": // the page-cache mode with Options.TailCache
		sf = segment.NewFiler(walDir, raftwal.New(raftwal.Options{Mode: diskio.PageCache, TailCache: raftwal.DefaultTailCache}))
	default:
		return fmt.Errorf("unknown -layer %q", *layer)
	}
	w, err := wal.Open(walDir, wal.WithLogger(logger.Named("wal")), wal.WithSegmentSize(*segSize), wal.WithSegmentFiler(sf))
	if err != nil {
		return fmt.Errorf("open raft-wal: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStore(filepath.Join(*dir, "snapshots"), 2, logOut)
	if err != nil {
		return err
	}
	trans, err := raft.NewTCPTransportWithLogger(addrs[*id], nil, 3, 10*time.Second, logger.Named("net"))
	if err != nil {
		return err
	}
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(fmt.Sprint(*id))
	conf.Logger = logger
	conf.HeartbeatTimeout = 500 * time.Millisecond
	conf.ElectionTimeout = 500 * time.Millisecond
	conf.LeaderLeaseTimeout = 250 * time.Millisecond
	conf.SnapshotThreshold = *snapEvery
	conf.SnapshotInterval = 2 * time.Second
	conf.TrailingLogs = *trailing

	existing, err := raft.HasExistingState(w, w, snaps)
	if err != nil {
		return err
	}
	if !existing {
		var cfg raft.Configuration
		for i, a := range addrs {
			cfg.Servers = append(cfg.Servers, raft.Server{ID: raft.ServerID(fmt.Sprint(i)), Address: raft.ServerAddress(a)})
		}
		if err := raft.BootstrapCluster(conf, w, w, snaps, trans, cfg); err != nil {
			return err
		}
	}
	f := newFSM()
	r, err := raft.NewRaft(conf, f, w, w, snaps, trans)
	if err != nil {
		return err
	}

	// Clients: one entry per request; the answer is 0 (applied), 1 and
	// the leader's node number (255: none known) when this node is not
	// the leader, 2 on any other failure.
	ln, err := net.Listen("tcp", *applyAddr)
	if err != nil {
		return err
	}
	leaderNum := func() byte {
		a, _ := r.LeaderWithID()
		for i, p := range addrs {
			if raft.ServerAddress(p) == a {
				return byte(i)
			}
		}
		return 255
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				var req [8]byte
				for {
					if _, err := io.ReadFull(br, req[:]); err != nil {
						return
					}
					resp := []byte{0, 0}
					if r.State() != raft.Leader {
						resp = []byte{1, leaderNum()}
					} else if err := r.Apply(entryData(binary.LittleEndian.Uint64(req[:])), 10*time.Second).Error(); err != nil {
						resp = []byte{2, 0}
						if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
							resp = []byte{1, leaderNum()}
						}
					}
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}()
		}
	}()

	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(wr http.ResponseWriter, _ *http.Request) {
		la, _ := r.LeaderWithID()
		f.mu.Lock()
		st := nodeStatus{ID: fmt.Sprint(*id), State: r.State().String(), Leader: string(la),
			LastIndex: r.LastIndex(), CommitIndex: r.CommitIndex(), AppliedIndex: r.AppliedIndex(),
			FSMApplied: f.applied, Sum: f.sum, Count: len(f.ids), Dups: f.dups, Bad: f.bad}
		f.mu.Unlock()
		json.NewEncoder(wr).Encode(st)
	})
	mux.HandleFunc("/ids", func(wr http.ResponseWriter, _ *http.Request) {
		s := f.state()
		b := make([]byte, 8*len(s.IDs))
		for i, id := range s.IDs {
			binary.LittleEndian.PutUint64(b[8*i:], id)
		}
		wr.Write(b)
	})
	mux.HandleFunc("/barrier", func(wr http.ResponseWriter, _ *http.Request) {
		if err := r.Barrier(10 * time.Second).Error(); err != nil {
			http.Error(wr, err.Error(), http.StatusServiceUnavailable)
		}
	})
	return http.ListenAndServe(*ctlAddr, mux)
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
