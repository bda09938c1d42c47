package main

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// load is a set of clients applying entries to the cluster's leader, each
// one request at a time on its own connection, every request a new id.
type load struct {
	c      *cluster
	nextID *atomic.Uint64
	hint   atomic.Int32 // the node clients believe is the leader

	stopped atomic.Bool
	wg      sync.WaitGroup

	mu    sync.Mutex
	acked []uint64
	lat   []sample

	nAcked, nFailed atomic.Int64
}

type sample struct {
	done time.Time
	lat  time.Duration
}

// startLoad starts n clients; they stop at stop() or at the deadline.
func startLoad(c *cluster, nextID *atomic.Uint64, n int, deadline time.Time) *load {
	l := &load{c: c, nextID: nextID}
	for range n {
		l.wg.Add(1)
		go l.client(deadline)
	}
	return l
}

func (l *load) stop() {
	l.stopped.Store(true)
	l.wg.Wait()
}

func (l *load) client(deadline time.Time) {
	defer l.wg.Done()
	var (
		conn  net.Conn
		br    *bufio.Reader
		node  = -1
		acked []uint64
		lat   []sample
	)
	defer func() {
		if conn != nil {
			conn.Close()
		}
		l.mu.Lock()
		l.acked = append(l.acked, acked...)
		l.lat = append(l.lat, lat...)
		l.mu.Unlock()
	}()
	var req [8]byte
	var resp [2]byte
	for !l.stopped.Load() && time.Now().Before(deadline) {
		if conn == nil {
			node = int(l.hint.Load())
			var err error
			conn, err = net.DialTimeout("tcp", l.c.apply[node], time.Second)
			if err != nil {
				conn = nil
				l.rotate(node)
				time.Sleep(20 * time.Millisecond)
				continue
			}
			br = bufio.NewReader(conn)
		}
		id := l.nextID.Add(1)
		binary.LittleEndian.PutUint64(req[:], id)
		start := time.Now()
		conn.SetDeadline(start.Add(20 * time.Second))
		_, err := conn.Write(req[:])
		if err == nil {
			_, err = io.ReadFull(br, resp[:])
		}
		switch {
		case err == nil && resp[0] == 0:
			now := time.Now()
			acked = append(acked, id)
			lat = append(lat, sample{now, now.Sub(start)})
			l.nAcked.Add(1)
			continue
		case err == nil && resp[0] == 1 && int(resp[1]) < l.c.n():
			l.hint.CompareAndSwap(int32(node), int32(resp[1]))
		default:
			l.rotate(node)
		}
		l.nFailed.Add(1)
		conn.Close()
		conn = nil
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *load) rotate(from int) {
	l.hint.CompareAndSwap(int32(from), int32((from+1)%l.c.n()))
}

// window returns the applies per second and latency percentiles of the
// requests that completed in [from, to).
func (l *load) window(from, to time.Time) (rate float64, p50, p99 time.Duration, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lats []time.Duration
	for _, s := range l.lat {
		if !s.done.Before(from) && s.done.Before(to) {
			lats = append(lats, s.lat)
		}
	}
	if len(lats) == 0 {
		return 0, 0, 0, 0
	}
	slices.Sort(lats)
	return float64(len(lats)) / to.Sub(from).Seconds(), lats[len(lats)/2], lats[len(lats)*99/100], len(lats)
}
