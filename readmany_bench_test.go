//go:build linux

package diskio_test

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/benchfile"
	"github.com/diskio-go/diskio/sched"
)

// BenchmarkReadMany: 50 goroutines each reading 50 random 4 KiB ranges at
// once (Glommio's read_many phase), without merging and merging up to
// 128 KiB, with the scheduler's in-flight bound at 256 and at 1,024 (the
// default). One op is one range; ns/op is wall time per range over all
// goroutines. Compare with fio --rw=randread --bs=4k --iodepth=2500
// --iodepth_batch_submit=50 --direct=1 on the same file:
//
//	DISKIO_BENCH_FILE=/tmp/f.dat go test -run '^$' -bench ReadMany -benchtime 200000x .
func BenchmarkReadMany(b *testing.B) {
	size := benchfile.Size()
	path := benchfile.Shared(b, size)
	const g, m = 50, 50
	for _, entries := range []int{256, 1024} {
		for _, merge := range []int{diskio.NoMerge, 128 << 10} {
			b.Run(fmt.Sprintf("entries=%d/maxmerge=%d", entries, merge), func(b *testing.B) {
				s, err := sched.New(sched.Options{Entries: entries})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				f, err := diskio.OpenFile(path, os.O_RDONLY, 0, diskio.WithScheduler(s))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				var left atomic.Int64
				left.Store(int64(b.N))
				b.ResetTimer()
				var wg sync.WaitGroup
				for i := range g {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rng := bench.NewRand(uint64(i))
						ranges := make([]diskio.Range, m)
						var bufs []*diskio.Buffer
						for left.Add(-m) > -m {
							for k := range ranges {
								ranges[k] = diskio.Range{Off: rng.Offset(size, 4096), Len: 4096}
							}
							var err error
							if bufs, err = diskio.ExportAppendReadMany(f, bufs[:0], ranges, diskio.ReadManyOptions{MaxMerge: merge}); err != nil {
								b.Error(err)
								return
							}
							for _, buf := range bufs {
								buf.Release()
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
			})
		}
	}
}
