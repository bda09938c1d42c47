//go:build linux

package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// measure takes the process's CPU time, storage I/O and peak OS threads
// over a phase.
type measure struct {
	start      time.Time
	cpu        time.Duration
	rd, wr     int64
	peak       int
	stopSample chan struct{}
	wg         sync.WaitGroup
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ioBytes returns read_bytes and write_bytes of /proc/self/io: what the
// process made the storage layer fetch or send (page cache hits excluded).
func ioBytes() (rd, wr int64) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := bytes.Cut(sc.Bytes(), []byte(": "))
		n, _ := strconv.ParseInt(string(v), 10, 64)
		switch string(k) {
		case "read_bytes":
			rd = n
		case "write_bytes":
			wr = n
		}
	}
	return rd, wr
}

func threads() int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	return len(ents)
}

func startMeasure() *measure {
	m := &measure{start: time.Now(), cpu: cpuTime(), peak: threads(), stopSample: make(chan struct{})}
	m.rd, m.wr = ioBytes()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stopSample:
				return
			case <-t.C:
				m.peak = max(m.peak, threads())
			}
		}
	}()
	return m
}

func (m *measure) stop(ops int64) result {
	elapsed := time.Since(m.start)
	cpu := cpuTime() - m.cpu
	close(m.stopSample)
	m.wg.Wait()
	rd, wr := ioBytes()
	return result{
		Ops:        ops,
		OpsPerSec:  float64(ops) / elapsed.Seconds(),
		CPUPerOp:   float64(cpu.Microseconds()) / float64(max(ops, 1)),
		Threads:    max(m.peak, threads()),
		ReadBytes:  rd - m.rd,
		WriteBytes: wr - m.wr,
	}
}
