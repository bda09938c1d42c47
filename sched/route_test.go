//go:build linux

package sched

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
)

// A started call nobody waits for yet must not hold up the wake-up relay:
// the loop would wait for its baton forever, and every later request with
// it.
func TestRelaySkipsCallsNotWaitedFor(t *testing.T) {
	for _, b := range []Backend{URing, AIO} {
		t.Run(string(b), func(t *testing.T) {
			s := newSched(t, b, Options{})
			f := testenv.DirectFile(t)
			fd := int(f.Fd())
			data := testenv.AlignedBuf(t, 64*blockSize)
			fill(data, 3)
			_, err := s.WriteAt(fd, data, 0)
			require.NoError(t, err)
			late := s.StartReadAt(fd, testenv.AlignedBuf(t, blockSize), 0)
			done := make(chan struct{})
			go func() {
				defer close(done)
				var wg sync.WaitGroup
				for g := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						p := testenv.AlignedBuf(t, blockSize)
						for i := range 200 {
							off := int64((g*200+i)%64) * blockSize
							if _, err := s.ReadAt(fd, p, off); err != nil {
								t.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("reads stalled behind a started call not waited for")
			}
			n, err := late.Wait()
			require.NoError(t, err)
			require.Equal(t, blockSize, n)
		})
	}
}

// On Linux AIO a read or write of a file without O_DIRECT runs on its
// caller, in a transfer slot: io_submit would make it on the loop's
// thread. A direct file's go to the kernel queue.
func TestAIOBufferedTransfersOnCallers(t *testing.T) {
	s := newSched(t, AIO, Options{})
	path := filepath.Join(t.TempDir(), "buffered")
	data := make([]byte, 1<<20)
	fill(data, 5)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	osf, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer osf.Close()
	f, err := s.Open(int(osf.Fd()), path)
	require.NoError(t, err)
	defer f.Close()
	require.False(t, f.direct)

	// A direct read kept in flight, so that the buffered ones are not
	// the idle fast path's.
	df := testenv.DirectFile(t)
	p := testenv.AlignedBuf(t, blockSize)
	_, err = s.WriteAt(int(df.Fd()), p, 0)
	require.NoError(t, err)
	inline := s.Stats().Inline
	c := s.StartReadAt(int(df.Fd()), p, 0)
	got := make([]byte, 64<<10)
	n, err := f.ReadAt(got, 128<<10)
	require.NoError(t, err)
	require.Equal(t, len(got), n)
	require.Equal(t, data[128<<10:][:len(got)], got)
	n, err = s.WriteAt(int(osf.Fd()), data[:4096], 1<<20)
	require.NoError(t, err)
	require.Equal(t, 4096, n)
	_, err = c.Wait()
	require.NoError(t, err)
	require.Equal(t, inline+2, s.Stats().Inline, "the buffered file's transfers made on callers, the direct read through the loop")
}
