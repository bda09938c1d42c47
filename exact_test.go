//go:build linux

package diskio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/sched"
)

// What other descriptors and processes see of a File's writes: exact
// bytes, exact sizes, O_APPEND as the kernel does it.

// appendRecord is record i of writer w, n bytes, ending in '\n'.
func appendRecord(w byte, i, n int) []byte {
	r := bytes.Repeat([]byte{w}, n)
	copy(r[1:], fmt.Sprintf("%05d", i))
	r[n-1] = '\n'
	return r
}

// checkAppendRecords checks that the file holds exactly per records of n
// bytes from each writer, each whole, in order per writer.
func checkAppendRecords(t *testing.T, name string, writers []byte, per, n int) {
	t.Helper()
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, len(writers)*per*n, len(got), "file size")
	require.Equal(t, -1, bytes.IndexByte(got, 0), "a NUL byte in the file")
	next := map[byte]int{}
	for off := 0; off < len(got); off += n {
		rec := got[off : off+n]
		w := rec[0]
		require.Equal(t, string(appendRecord(w, next[w], n)), string(rec), "record at %d", off)
		next[w]++
	}
	for _, w := range writers {
		require.Equal(t, per, next[w], "records of writer %c", w)
	}
}

// Two Files opened O_APPEND on one path, one goroutine each: every record
// lands whole at the end, none overwrites another (they lost up to half
// when the append offset came from the File's own size bookkeeping).
func TestAppendTwoDescriptors(t *testing.T) {
	for _, n := range []int{20, 512} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "log")
			var wg sync.WaitGroup
			for _, w := range []byte{'a', 'b'} {
				f, err := OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
				require.NoError(t, err)
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer f.Close()
					for i := range 300 {
						if _, err := f.Write(appendRecord(w, i, n)); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			checkAppendRecords(t, name, []byte{'a', 'b'}, 300, n)
		})
	}
}

// The same from two processes (this test binary, run again as a helper).
func TestAppendTwoProcesses(t *testing.T) {
	if os.Getenv("DISKIO_APPEND_HELPER") != "" {
		t.Skip("running as a helper")
	}
	for _, n := range []int{20, 512} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "log")
			var cmds []*exec.Cmd
			for _, w := range []string{"a", "b"} {
				cmd := exec.Command(os.Args[0], "-test.run=^TestAppendHelperProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), "DISKIO_APPEND_HELPER="+strings.Join([]string{name, w, strconv.Itoa(n)}, ","))
				cmd.Stderr = os.Stderr
				require.NoError(t, cmd.Start())
				cmds = append(cmds, cmd)
			}
			for _, c := range cmds {
				require.NoError(t, c.Wait())
			}
			checkAppendRecords(t, name, []byte{'a', 'b'}, 300, n)
		})
	}
}

// TestAppendHelperProcess is TestAppendTwoProcesses's writer.
func TestAppendHelperProcess(t *testing.T) {
	arg := os.Getenv("DISKIO_APPEND_HELPER")
	if arg == "" {
		t.Skip("a helper of TestAppendTwoProcesses")
	}
	p := strings.Split(arg, ",")
	n, err := strconv.Atoi(p[2])
	require.NoError(t, err)
	f, err := OpenFile(p[0], os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	require.NoError(t, err)
	for i := range 300 {
		_, err := f.Write(appendRecord(p[1][0], i, n))
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
}

// Fd keeps O_APPEND: it is the descriptor as opened.
func TestFdKeepsAppend(t *testing.T) {
	f, err := OpenFile(filepath.Join(t.TempDir(), "log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	require.NoError(t, err)
	defer f.Close()
	require.NotZero(t, fdFlags(t, f.Fd())&os.O_APPEND)
}

// While a File writes unaligned data, os.Stat and os.ReadFile on the path
// never see a size or a byte beyond what was written (a padded O_DIRECT
// block used to show as zeros until Sync or Close trimmed it).
func TestOtherReadersSeeExactBytes(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	f, err := Create(name)
	require.NoError(t, err)
	defer f.Close()
	pattern := func(off int64) byte { return byte(off*7 + off/251 + 1) }
	const writes = 10000
	rng := rand.New(rand.NewPCG(3, 4))
	var issued atomic.Int64 // the end of the write in progress
	var finished atomic.Bool
	done := make(chan struct{})
	var polls, reads atomic.Int64
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			if finished.Load() {
				return
			}
			fi, err := os.Stat(name)
			if err != nil {
				t.Error(err)
				return
			}
			if lim := issued.Load(); fi.Size() > lim {
				t.Errorf("os.Stat: size %d, but only %d bytes written", fi.Size(), lim)
				return
			}
			polls.Add(1)
			if i%20 != 0 {
				continue
			}
			b, err := os.ReadFile(name)
			if err != nil {
				t.Error(err)
				return
			}
			lim := issued.Load()
			if int64(len(b)) > lim {
				t.Errorf("os.ReadFile: %d bytes, but only %d written", len(b), lim)
				return
			}
			for j, c := range b {
				if c != pattern(int64(j)) {
					t.Errorf("os.ReadFile: byte %d of %d is %#x, not what was written (%#x)", j, len(b), c, pattern(int64(j)))
					return
				}
			}
			reads.Add(1)
		}
	}()
	var off int64
	for range writes {
		n := 1 + rng.IntN(1500)
		p := make([]byte, n)
		for j := range p {
			p[j] = pattern(off + int64(j))
		}
		issued.Store(off + int64(n))
		_, err := f.Write(p)
		require.NoError(t, err)
		off += int64(n)
	}
	finished.Store(true)
	<-done
	t.Logf("%d stats, %d whole-file reads during %d writes", polls.Load(), reads.Load(), writes)
	require.NoError(t, f.Close())
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, off, int64(len(got)))
}

// WriteAt("AB", 10) on a 10-byte file, then another descriptor's O_APPEND
// write, then Close: the other's bytes stay (Close used to truncate the
// file to the size this File knew).
func TestCloseKeepsOtherWriters(t *testing.T) {
	for _, sync := range []bool{false, true} {
		name := filepath.Join(t.TempDir(), "f")
		require.NoError(t, os.WriteFile(name, []byte("0123456789"), 0o644))
		f, err := OpenFile(name, os.O_RDWR, 0)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("AB"), 10)
		require.NoError(t, err)
		o, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = o.WriteString("<other>")
		require.NoError(t, err)
		require.NoError(t, o.Close())
		if sync {
			require.NoError(t, f.Sync())
		}
		require.NoError(t, f.Close())
		got, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, "0123456789AB<other>", string(got), "Sync first: %v", sync)
	}
}

// A File's cached partial block is not trusted after another descriptor
// wrote into it.
func TestKnownBlockSeesOtherWriter(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	f, err := Create(name)
	require.NoError(t, err)
	defer f.Close()
	o, err := os.OpenFile(name, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer o.Close()
	var want []byte
	for i := range 200 {
		a := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i*37%700)
		_, err := f.WriteAt(a, int64(len(want)))
		require.NoError(t, err)
		want = append(want, a...)
		b := bytes.Repeat([]byte{byte('A' + i%26)}, 1+i*53%300)
		_, err = o.WriteAt(b, int64(len(want)))
		require.NoError(t, err)
		want = append(want, b...)
		// Overwrite a few bytes the other wrote, from this File.
		_, err = f.WriteAt([]byte("#"), int64(len(want))-1)
		require.NoError(t, err)
		want[len(want)-1] = '#'
	}
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// readCounter counts the read requests a scheduler issues.
type readCounter struct{ reads, writes atomic.Int64 }

func (c *readCounter) SyscallDone(sched.SyscallEvent) {}
func (c *readCounter) RequestDone(ev sched.RequestEvent) {
	switch ev.Op {
	case sched.OpRead:
		c.reads.Add(1)
	case sched.OpWrite:
		c.writes.Add(1)
	}
}

// 10,000 unaligned appends of random sizes (1 B to 64 KiB) issue no read
// on a new file, a preallocated one (by this File, or by another and
// reopened), a recycled one and an existing one: the edge pages go through
// the page cache. The kernel's own reads (/proc/self/io) are logged: none
// where the edge pages are past the size or unwritten; on a recycled file
// it reads the old bytes of each edge page once, as it does for os.File.
func TestAppendsReadNothing(t *testing.T) {
	c := &readCounter{}
	s, err := sched.New(sched.Options{Tracer: c})
	require.NoError(t, err)
	defer s.Close()
	// The 10,000 take ~100 s here: DISKIO_APPENDS=10000.
	appends := 1000
	if v, err := strconv.Atoi(os.Getenv("DISKIO_APPENDS")); err == nil {
		appends = v
	}
	sizes := func() []int {
		rng := rand.New(rand.NewPCG(5, 6))
		out := make([]int, appends)
		for i := range out {
			out[i] = 1 + rng.IntN(64<<10)
		}
		return out
	}()
	total := int64(0)
	for _, n := range sizes {
		total += int64(n)
	}
	data := randomBytes(64<<10, 9)
	run := func(t *testing.T, f *File) {
		defer f.Close()
		if !f.Direct() {
			t.Skip("no O_DIRECT here: nothing is read back")
		}
		c.reads.Store(0)
		c.writes.Store(0)
		kernel := readBytes(t)
		var off int64
		for _, n := range sizes {
			_, err := f.WriteAt(data[:n], off)
			require.NoError(t, err)
			off += int64(n)
		}
		require.Zero(t, c.reads.Load(), "reads")
		t.Logf("%d appends, %d bytes: %d reads, %d writes; the kernel read %d bytes",
			len(sizes), off, c.reads.Load(), c.writes.Load(), readBytes(t)-kernel)
	}
	dir := t.TempDir()
	t.Run("new", func(t *testing.T) {
		f, err := OpenFile(filepath.Join(dir, "new"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, WithScheduler(s), WithDirect(Direct))
		require.NoError(t, err)
		run(t, f)
	})
	t.Run("preallocated", func(t *testing.T) {
		f, err := OpenFile(filepath.Join(dir, "prealloc"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, WithScheduler(s), WithDirect(Direct))
		require.NoError(t, err)
		require.NoError(t, f.Preallocate(0, total))
		run(t, f)
	})
	t.Run("preallocated-reopened", func(t *testing.T) {
		name := filepath.Join(dir, "prealloc2")
		f, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, WithScheduler(s), WithDirect(Direct))
		require.NoError(t, err)
		require.NoError(t, f.Preallocate(0, total))
		require.NoError(t, f.Close())
		f, err = OpenFile(name, os.O_RDWR, 0, WithScheduler(s), WithDirect(Direct))
		require.NoError(t, err)
		run(t, f)
	})
	t.Run("recycled", func(t *testing.T) {
		// Pebble's recycled log: a file written and synced before,
		// appended to from offset 0 again. Its old bytes past each
		// append must stay, and nothing knows them but the disk.
		name := filepath.Join(dir, "recycled")
		f, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, WithScheduler(s), WithDirect(Direct))
		require.NoError(t, err)
		for off := int64(0); off < total; off += int64(len(data)) {
			_, err := f.WriteAt(data[:min(int64(len(data)), total-off)], off)
			require.NoError(t, err)
		}
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
		f, err = OpenFile(name, os.O_RDWR, 0, WithScheduler(s), WithDirect(Direct))
		require.NoError(t, err)
		run(t, f)
	})
	t.Run("recycled-small-records", func(t *testing.T) {
		// A log of 100 B records over old data: each page's old bytes
		// are read once, ahead of the appends (readAheadEdge), not more.
		name := filepath.Join(dir, "recycled-small")
		const records, size = 20000, 100
		require.NoError(t, os.WriteFile(name, randomBytes(records*size+8192, 3), 0o644))
		require.NoError(t, bench.Evict(name))
		f, err := OpenFile(name, os.O_RDWR, 0, WithScheduler(s))
		require.NoError(t, err)
		defer f.Close()
		c.reads.Store(0)
		kernel := readBytes(t)
		for i := range records {
			_, err := f.WriteAt(data[:size], int64(i*size))
			require.NoError(t, err)
		}
		read := readBytes(t) - kernel
		require.Zero(t, c.reads.Load())
		require.LessOrEqual(t, read, int64(records*size+edgeWindow+8192), "old data read more than once")
		t.Logf("recycled file, %d appends of %d B: 0 reads; the kernel read %d bytes", records, size, read)
	})
	t.Run("existing", func(t *testing.T) {
		name := filepath.Join(dir, "existing")
		require.NoError(t, os.WriteFile(name, data[:12345], 0o644))
		require.NoError(t, bench.Evict(name)) // on the disk only, as after a restart
		f, err := OpenFile(name, os.O_RDWR, 0, WithScheduler(s))
		require.NoError(t, err)
		// Appends after the existing bytes: the kernel reads the last
		// partial page, once.
		defer f.Close()

		c.reads.Store(0)
		kernel := readBytes(t)
		off := int64(12345)
		for _, n := range sizes {
			_, err := f.WriteAt(data[:n], off)
			require.NoError(t, err)
			off += int64(n)
		}
		require.Zero(t, c.reads.Load())
		t.Logf("existing file, %d appends: 0 reads; the kernel read %d bytes", len(sizes), readBytes(t)-kernel)
		got, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, data[:12345], got[:12345])
		require.Equal(t, off, int64(len(got)))
	})
}

// readBytes is what this process has read from storage so far
// (/proc/self/io read_bytes: every thread's, io_uring's workers included).
func readBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/io")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "read_bytes: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no read_bytes in /proc/self/io")
	return 0
}

// flushCounter counts flush requests and the flags of writes.
type flushCounter struct {
	flushes, writes atomic.Int64
}

func (c *flushCounter) SyscallDone(sched.SyscallEvent) {}
func (c *flushCounter) RequestDone(ev sched.RequestEvent) {
	switch ev.Op {
	case sched.OpFsync, sched.OpFdatasync:
		c.flushes.Add(1)
	case sched.OpWrite:
		c.writes.Add(1)
	}
}

// A write followed by Sync or Datasync, over and over, is made durable by
// the write itself (RWF_DSYNC / RWF_SYNC): the flushes after the first
// find nothing to do. Two writes between flushes, or another descriptor's
// write, bring the flush back.
func TestDurableInOneTrip(t *testing.T) {
	c := &flushCounter{}
	s, err := sched.New(sched.Options{Tracer: c})
	require.NoError(t, err)
	defer s.Close()
	for _, full := range []bool{false, true} {
		name := filepath.Join(t.TempDir(), "wal")
		f, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, WithScheduler(s), WithDirect(Direct))
		require.NoError(t, err)
		if !f.Direct() {
			t.Skip("no O_DIRECT here")
		}
		flush := f.Datasync
		if full {
			flush = f.Sync
		}
		rec := bytes.Repeat([]byte("r"), 1000)
		c.flushes.Store(0)
		for range 20 {
			_, err := f.Write(rec)
			require.NoError(t, err)
			require.NoError(t, flush())
		}
		require.Equal(t, int64(1), c.flushes.Load(), "flushes for 20 write+flush pairs (full=%v)", full)
		// Two writes between flushes: an ordinary write, then a flush.
		_, err = f.Write(rec)
		require.NoError(t, err)
		_, err = f.Write(rec)
		require.NoError(t, err)
		require.NoError(t, flush())
		require.Equal(t, int64(2), c.flushes.Load())
		// The next write is durable again only after a write+flush pair.
		_, err = f.Write(rec)
		require.NoError(t, err)
		require.NoError(t, flush())
		require.Equal(t, int64(3), c.flushes.Load())
		_, err = f.Write(rec)
		require.NoError(t, err)
		// Another descriptor writes: the flush must cover it.
		o, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = o.WriteString("other")
		require.NoError(t, err)
		require.NoError(t, o.Close())
		require.NoError(t, flush())
		require.Equal(t, int64(4), c.flushes.Load())
		require.NoError(t, f.Close())
		got, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, 24*1000+5, len(got))
	}
}

// Concurrent writers of adjacent unaligned records, some flushing after
// each: every byte lands, and no flush fails. (Once a writer trusted that
// all was zeros past a size another writer of the File was extending, and
// a direct write in flight beside a buffered one made the kernel fail the
// next fsync with EIO.)
func TestConcurrentUnalignedAppends(t *testing.T) {
	for _, kind := range []string{"growing", "preallocated"} {
		t.Run(kind, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "log")
			f, err := Create(name)
			require.NoError(t, err)
			const writers, per = 8, 150
			rng := rand.New(rand.NewPCG(7, 8))
			sizes := make([]int, writers*per)
			total := int64(0)
			for i := range sizes {
				sizes[i] = 1 + rng.IntN(9000)
				total += int64(sizes[i])
			}
			if kind == "preallocated" {
				require.NoError(t, f.Preallocate(0, total))
			}
			want := make([]byte, total)
			var mu sync.Mutex
			var next int
			var off int64
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						if next == len(sizes) {
							mu.Unlock()
							return
						}
						i, at := next, off
						next++
						off += int64(sizes[i])
						mu.Unlock()
						p := bytes.Repeat([]byte{byte(1 + i%251)}, sizes[i])
						copy(want[at:], p)
						if _, err := f.WriteAt(p, at); err != nil {
							t.Error(err)
							return
						}
						if w%2 == 0 {
							if err := f.Datasync(); err != nil {
								t.Error(err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			require.NoError(t, f.Sync())
			require.NoError(t, f.Close())
			got, err := os.ReadFile(name)
			require.NoError(t, err)
			require.Equal(t, len(want), len(got))
			require.Equal(t, firstDiff(want, got), len(want), "first wrong byte")
		})
	}
}
