//go:build linux

// Command diskload runs a disk workload through diskio and serves its
// scheduler's metrics for Prometheus: readers of random 4 KiB blocks
// (O_DIRECT), a write-ahead log appending 4 KiB and syncing each append
// (latency class), and a background writer of 256 KiB blocks. With
// -stall-at it injects a stall: every read submitted during one second
// from then completes -stall-for late (the scheduler's fault injection).
// It draws the README's dashboard picture (see cmd/dashpng):
//
//	go run ./cmd/diskload -listen 127.0.0.1:9188 -d 4m -stall-at 2m -stall-for 6s
package main

import (
	"flag"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/diskio-go/diskio"
	diskioprom "github.com/diskio-go/diskio/contrib/prometheus"
	"github.com/diskio-go/diskio/sched"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9188", "address of the /metrics endpoint")
	dir := flag.String("dir", os.TempDir(), "where the data files go (removed at the end)")
	dur := flag.Duration("d", 4*time.Minute, "how long to run")
	readers := flag.Int("readers", 16, "goroutines reading random 4 KiB blocks")
	size := flag.Int64("size", 256<<20, "size of the file read")
	stallAt := flag.Duration("stall-at", 0, "when to inject a stall (0: none)")
	stallFor := flag.Duration("stall-for", 6*time.Second, "how late the stalled reads complete")
	flag.Parse()

	start := time.Now()
	var stalling atomic.Bool
	s, err := sched.New(sched.Options{
		Faults: sched.FaultFunc(func(a sched.Attempt) sched.Fault {
			if a.Op == sched.OpRead && stalling.Load() {
				return sched.Fault{Delay: *stallFor}
			}
			return sched.Fault{}
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(diskioprom.New(s, diskioprom.Options{}))
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	go func() { log.Fatal(http.ListenAndServe(*listen, nil)) }()

	work, err := os.MkdirTemp(*dir, "diskload")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	open := func(name string, c sched.Class) *diskio.File {
		f, err := diskio.OpenFile(filepath.Join(work, name), os.O_RDWR|os.O_CREATE, 0o600,
			diskio.WithScheduler(s), diskio.WithDirect(diskio.Direct), diskio.WithClass(c))
		if err != nil {
			log.Fatal(err)
		}
		return f
	}
	data := open("data", sched.Unclassified)
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = byte(i * 7)
	}
	for off := int64(0); off < *size; off += int64(len(block)) {
		if _, err := data.WriteAt(block, off); err != nil {
			log.Fatal(err)
		}
	}
	if err := data.Sync(); err != nil {
		log.Fatal(err)
	}
	log.Printf("serving %s/metrics; workload for %v", *listen, *dur)
	end := start.Add(*dur)
	for g := range *readers {
		go func() {
			buf := make([]byte, 4096)
			x := uint64(g)*0x9e3779b97f4a7c15 + 1
			for time.Now().Before(end) {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				if _, err := data.ReadAt(buf, int64(x%uint64(*size/4096))*4096); err != nil {
					log.Fatal(err)
				}
			}
		}()
	}
	go func() { // the WAL
		f := open("wal", sched.Latency)
		buf := make([]byte, 4096)
		for off := int64(0); time.Now().Before(end); off += 4096 {
			if off >= 64<<20 {
				off = 0
			}
			if _, err := f.WriteAt(buf, off); err != nil {
				log.Fatal(err)
			}
			if err := f.Datasync(); err != nil {
				log.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	go func() { // background writes: a compaction's output
		f := open("table", sched.Background)
		buf := block[:256<<10]
		for off := int64(0); time.Now().Before(end); off += int64(len(buf)) {
			if off >= 128<<20 {
				off = 0
			}
			if _, err := f.WriteAt(buf, off); err != nil {
				log.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if *stallAt > 0 {
		time.AfterFunc(time.Until(start.Add(*stallAt)), func() {
			log.Printf("stall: reads submitted in the next second complete %v late", *stallFor)
			stalling.Store(true)
			time.Sleep(time.Second)
			stalling.Store(false)
		})
	}
	time.Sleep(time.Until(end))
	log.Printf("done")
}
