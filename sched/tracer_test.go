//go:build linux

package sched

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
)

// recorder is a Tracer that keeps everything.
type recorder struct {
	mu       sync.Mutex
	syscalls []SyscallEvent
	requests []RequestEvent
}

func (r *recorder) SyscallDone(ev SyscallEvent) {
	r.mu.Lock()
	r.syscalls = append(r.syscalls, ev)
	r.mu.Unlock()
}

func (r *recorder) RequestDone(ev RequestEvent) {
	r.mu.Lock()
	r.requests = append(r.requests, ev)
	r.mu.Unlock()
}

func TestTracerSeesEveryRequestAndSyscall(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			rec := &recorder{}
			s := newSched(t, b, Options{Tracer: rec, NoInline: true})
			f := testenv.DirectFile(t)
			const workers, each = 8, 25
			buf := testenv.AlignedBuf(t, workers*blockSize)
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					p := buf[w*blockSize : (w+1)*blockSize]
					for i := 0; i < each; i++ {
						_, err := s.WriteAt(int(f.Fd()), p, int64(w)*blockSize)
						require.NoError(t, err)
					}
				}(w)
			}
			wg.Wait()
			require.NoError(t, s.Close())

			rec.mu.Lock()
			defer rec.mu.Unlock()
			require.Len(t, rec.requests, workers*each)
			for _, ev := range rec.requests {
				require.Equal(t, OpWrite, ev.Op)
				require.Equal(t, blockSize, ev.N)
				require.NoError(t, ev.Err)
				require.Equal(t, b, ev.Backend)
				require.Equal(t, b == Blocking, ev.Inline)
				require.Positive(t, ev.Enqueue)
				require.LessOrEqual(t, ev.Enqueue, ev.Submit, "%+v", ev)
				require.LessOrEqual(t, ev.Submit, ev.Complete, "%+v", ev)
				require.LessOrEqual(t, ev.Complete, ev.Resume, "%+v", ev)
				require.GreaterOrEqual(t, ev.Submits, int32(1))
			}
			submitted := 0
			for _, ev := range rec.syscalls {
				require.LessOrEqual(t, ev.Start, ev.End)
				switch ev.Call {
				case SysURingEnter, SysIOSubmit, SysPwrite:
					submitted += ev.Submitted
				}
			}
			// Every write was handed to the kernel once (plus the
			// loop's own eventfd reads).
			require.GreaterOrEqual(t, submitted, workers*each)
			require.LessOrEqual(t, submitted, 2*workers*each+1)
		})
	}
}

type nopTracer struct{}

func (nopTracer) SyscallDone(SyscallEvent) {}
func (nopTracer) RequestDone(RequestEvent) {}

func TestTracerAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	s := newSched(t, URing, Options{Tracer: nopTracer{}, NoInline: true})
	f := testenv.DirectFile(t)
	buf := testenv.AlignedBuf(t, blockSize)
	_, err := s.WriteAt(int(f.Fd()), buf, 0)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(500, func() {
		if _, err := s.ReadAt(int(f.Fd()), buf, 0); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs)
}

// Once the default scheduler runs, its tracer is fixed: SetDefaultTracer
// says so and changes nothing. (That it attaches a tracer when it comes
// first is tested in a fresh process by package diskio's DISKIO_TRACE
// tests.)
func TestSetDefaultTracerAfterDefault(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	rec := &recorder{}
	require.False(t, SetDefaultTracer(rec))
	s2, err := Default()
	require.NoError(t, err)
	require.Same(t, s, s2)
	require.Nil(t, s2.tracer)
}
