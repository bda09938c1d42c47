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

	"github.com/diskio-go/diskio/internal/bench"
)

// measure takes the process's CPU time, storage I/O and peak OS threads
// over a phase.
type measure struct {
	start      time.Time
	cpu        time.Duration
	rd, wr     int64
	peak       int
	workers    int // peak io_uring workers (iou-wrk)
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

// threads counts the process's OS threads (io_uring's workers among
// them) with raw system calls, so that the sampler itself never makes
// the runtime start a thread (see bench.Threads).
func threads() int { return bench.Threads() }

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
				// Workers are counted only when the total grew: a
				// count reads a file per thread.
				if n := threads(); n > m.peak {
					m.peak = n
					m.workers = max(m.workers, bench.IOWorkers())
				}
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
		Workers:    max(m.workers, bench.IOWorkers()),
		ReadBytes:  rd - m.rd,
		WriteBytes: wr - m.wr,
	}
}
