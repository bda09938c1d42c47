//go:build linux

package sched

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
)

// Many goroutines reading through the scheduler add at most a few OS
// threads to the process (the loop's own, and a spare the runtime may
// start while it sleeps in the kernel); os.File would add one per
// goroutine blocked in pread.
func TestThreadsStayBounded(t *testing.T) {
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{NoInline: true})
			f := testenv.DirectFile(t)
			const goroutines, reads = 1000, 20
			buf := testenv.AlignedBuf(t, goroutines*blockSize)
			_, err := s.WriteAt(int(f.Fd()), buf, 0)
			require.NoError(t, err)

			before := tasks()
			peak := before
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				for {
					peak = max(peak, tasks())
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}()
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := buf[g*blockSize : (g+1)*blockSize]
					for i := range reads {
						if _, err := s.ReadAt(int(f.Fd()), p, int64((g+i)%goroutines*blockSize)); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(stop)
			<-sampled
			t.Logf("OS threads: %d before, peak %d", before, peak)
			require.LessOrEqual(t, peak-before, 3, "OS threads grew from %d to %d", before, peak)
		})
	}
}

func tasks() int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	return len(ents)
}
