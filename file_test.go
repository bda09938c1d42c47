//go:build linux

package diskio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/testenv"
)

// noPanic runs fn and turns a panic into a test error, so that one broken
// method fails its test instead of killing the test binary.
func noPanic(t testing.TB, what string, fn func()) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s panicked: %v\n%s", what, p, debug.Stack())
		}
	}()
	fn()
}

func randomBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

// openModes are the ways the tests open files: the default (the page
// cache), O_DIRECT where allowed (ext4, xfs, ...), and O_DIRECT required.
var openModes = []struct {
	name string
	mode DirectMode
}{{"buffered", PageCache}, {"auto", Direct}, {"direct", DirectRequired}}

func openForTest(t *testing.T, name string, flag int, mode DirectMode) *File {
	t.Helper()
	f, err := OpenFile(name, flag, 0o644, WithDirect(mode))
	if err != nil && mode == DirectRequired {
		testenv.Unavailable(t, "odirect", err)
	}
	require.NoError(t, err)
	switch mode {
	case DirectRequired:
		require.True(t, f.Direct())
	case PageCache:
		require.False(t, f.Direct())
	}
	return f
}

// TestFileIOTestReader: Read, ReadAt and Seek pass testing/iotest's reader
// checks on ~3 blocks + 123 bytes.
func TestFileIOTestReader(t *testing.T) {
	content := randomBytes(3*4096+123, 1)
	path := filepath.Join(t.TempDir(), "reader")
	require.NoError(t, os.WriteFile(path, content, 0o644))
	for _, m := range openModes {
		t.Run(m.name, func(t *testing.T) {
			f := openForTest(t, path, os.O_RDONLY, m.mode)
			defer f.Close()
			noPanic(t, "iotest.TestReader", func() {
				require.NoError(t, iotest.TestReader(f, content))
			})
		})
	}
}

// TestFileConcurrentUnalignedWriteAt: 64 goroutines write disjoint 100-byte
// slots at 37+i*100 at once, so that most 4 KiB blocks have several
// writers; no update may be lost, the size must be exact.
func TestFileConcurrentUnalignedWriteAt(t *testing.T) {
	const (
		slots   = 64
		slotLen = 100
		base    = 37
		end     = base + slots*slotLen // 6437
	)
	slot := func(i, round int) []byte {
		b := make([]byte, slotLen)
		for j := range b {
			b[j] = byte(i+1+round) ^ byte(j*29) // distinct from every other slot at every j
		}
		return b
	}
	for _, m := range openModes {
		t.Run(m.name, func(t *testing.T) {
			for round := range 16 {
				path := filepath.Join(t.TempDir(), fmt.Sprintf("slots%d", round))
				// The file starts empty (the writes extend it
				// concurrently), over 8 KiB of 0xAA, or over 777 or
				// 3000 bytes of 0xAA: an end of file inside a block
				// that some writers read-modify-write while others
				// extend the file past it.
				want := make([]byte, end)
				if prefill := []int{0, 8192, 777, 3000}[round%4]; prefill > 0 {
					copy(want, bytes.Repeat([]byte{0xAA}, prefill))
					if prefill > end {
						want = bytes.Repeat([]byte{0xAA}, prefill)
					}
					require.NoError(t, os.WriteFile(path, want[:prefill], 0o644))
				}
				f := openForTest(t, path, os.O_RDWR|os.O_CREATE, m.mode)
				for i := range slots {
					copy(want[base+i*slotLen:], slot(i, round))
				}

				start := make(chan struct{})
				var wg sync.WaitGroup
				errs := make([]error, slots)
				ns := make([]int, slots)
				for i := range slots {
					wg.Go(func() {
						defer func() {
							if p := recover(); p != nil {
								errs[i] = fmt.Errorf("panic: %v", p)
							}
						}()
						p := slot(i, round)
						<-start
						ns[i], errs[i] = f.WriteAt(p, int64(base+i*slotLen))
					})
				}
				close(start)
				wg.Wait()
				for i := range slots {
					require.NoError(t, errs[i], "slot %d", i)
					require.Equal(t, slotLen, ns[i], "slot %d", i)
				}

				fi, err := f.Stat()
				require.NoError(t, err)
				require.Equal(t, int64(len(want)), fi.Size())
				onDisk, err := os.ReadFile(path) // may hold padding until Close
				require.NoError(t, err)
				require.GreaterOrEqual(t, len(onDisk), len(want))
				for i := range slots {
					off := base + i*slotLen
					got := make([]byte, slotLen)
					n, err := f.ReadAt(got, int64(off))
					require.NoError(t, err, "slot %d", i)
					require.Equal(t, slotLen, n)
					require.Equal(t, slot(i, round), got, "slot %d through ReadAt, round %d", i, round)
					require.Equal(t, slot(i, round), onDisk[off:off+slotLen], "slot %d through os.ReadFile, round %d", i, round)
				}
				all := make([]byte, len(want)+10)
				n, err := f.ReadAt(all, 0)
				require.Equal(t, io.EOF, err)
				require.Equal(t, len(want), n)
				require.Equal(t, want, all[:n])

				require.NoError(t, f.Close())
				onDisk, err = os.ReadFile(path)
				require.NoError(t, err)
				require.Equal(t, want, onDisk, "round %d after Close", round)
			}
		})
	}
}

// TestFileUseAfterClose: every method of a closed File fails with
// os.ErrClosed, in a *fs.PathError with os.File's Op.
func TestFileUseAfterClose(t *testing.T) {
	dir := t.TempDir()
	pd, po := filepath.Join(dir, "d"), filepath.Join(dir, "o")
	content := randomBytes(5000, 2)
	for _, p := range []string{pd, po} {
		require.NoError(t, os.WriteFile(p, content, 0o644))
	}
	for _, m := range openModes {
		t.Run(m.name, func(t *testing.T) {
			f := openForTest(t, pd, os.O_RDWR, m.mode)
			of, err := os.OpenFile(po, os.O_RDWR, 0)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			require.NoError(t, of.Close())

			buf := make([]byte, 10)
			type result struct {
				n   int64
				err error
			}
			cases := []struct {
				name   string
				diskio func() (int64, error)
				os     func() (int64, error)
			}{
				{"Read", func() (int64, error) { n, err := f.Read(buf); return int64(n), err },
					func() (int64, error) { n, err := of.Read(buf); return int64(n), err }},
				{"ReadAt", func() (int64, error) { n, err := f.ReadAt(buf, 100); return int64(n), err },
					func() (int64, error) { n, err := of.ReadAt(buf, 100); return int64(n), err }},
				{"Write", func() (int64, error) { n, err := f.Write(buf); return int64(n), err },
					func() (int64, error) { n, err := of.Write(buf); return int64(n), err }},
				{"WriteAt", func() (int64, error) { n, err := f.WriteAt(buf, 100); return int64(n), err },
					func() (int64, error) { n, err := of.WriteAt(buf, 100); return int64(n), err }},
				{"WriteString", func() (int64, error) { n, err := f.WriteString("abc"); return int64(n), err },
					func() (int64, error) { n, err := of.WriteString("abc"); return int64(n), err }},
				{"Seek", func() (int64, error) { return f.Seek(10, io.SeekStart) },
					func() (int64, error) { return of.Seek(10, io.SeekStart) }},
				{"Stat", func() (int64, error) { _, err := f.Stat(); return 0, err },
					func() (int64, error) { _, err := of.Stat(); return 0, err }},
				{"Sync", func() (int64, error) { return 0, f.Sync() }, func() (int64, error) { return 0, of.Sync() }},
				{"Truncate", func() (int64, error) { return 0, f.Truncate(10) }, func() (int64, error) { return 0, of.Truncate(10) }},
				{"Close", func() (int64, error) { return 0, f.Close() }, func() (int64, error) { return 0, of.Close() }},
				// No os.File counterpart: os.ErrClosed all the same.
				{"Datasync", func() (int64, error) { return 0, f.Datasync() }, nil},
				{"Preallocate", func() (int64, error) { return 0, f.Preallocate(0, 4096) }, nil},
			}
			for _, c := range cases {
				var got result
				ok := false
				noPanic(t, c.name+" after Close", func() {
					got.n, got.err = c.diskio()
					ok = true
				})
				if !ok {
					continue
				}
				require.ErrorIs(t, got.err, os.ErrClosed, c.name)
				var pe *fs.PathError
				require.ErrorAs(t, got.err, &pe, c.name)
				require.Equal(t, pd, pe.Path, c.name)
				require.Zero(t, got.n, c.name)
				if c.os != nil {
					_, oerr := c.os()
					require.ErrorIs(t, oerr, os.ErrClosed, c.name)
					require.Empty(t, diffErr(got.err, oerr, pd, po), c.name)
				}
			}
			got, err := os.ReadFile(pd)
			require.NoError(t, err)
			require.Equal(t, content, got, "the calls after Close changed the file")
		})
	}
}

// TestFileCloseDuringIO: Close while 16 goroutines are in ReadAt/WriteAt
// loops neither crashes nor corrupts: each call returns nil or
// os.ErrClosed, every goroutine stops, the file holds what was written.
func TestFileCloseDuringIO(t *testing.T) {
	const (
		workers = 16
		size    = 64 << 10
		slotLen = 333 // unaligned, at 13+i*4000: shares blocks with reads
	)
	pattern := func(i int) []byte { return bytes.Repeat([]byte{byte(0x11 * (i%15 + 1))}, slotLen) }
	for _, m := range openModes {
		t.Run(m.name, func(t *testing.T) {
			for round := range 5 {
				path := filepath.Join(t.TempDir(), fmt.Sprintf("closing%d", round))
				content := randomBytes(size, byte(round))
				require.NoError(t, os.WriteFile(path, content, 0o644))
				f := openForTest(t, path, os.O_RDWR, m.mode)

				want := bytes.Clone(content)
				var ready, done sync.WaitGroup
				ready.Add(workers)
				errs := make(chan error, workers)
				for i := range workers {
					writer := i%2 == 0
					if writer {
						copy(want[13+i*4000:], pattern(i))
					}
					done.Go(func() {
						var once sync.Once
						markReady := func() { once.Do(ready.Done) }
						defer markReady()
						defer func() {
							if p := recover(); p != nil {
								errs <- fmt.Errorf("worker %d: panic: %v\n%s", i, p, debug.Stack())
							}
						}()
						buf := make([]byte, 100+i)
						for k := 0; ; k++ {
							var err error
							if writer {
								_, err = f.WriteAt(pattern(i), int64(13+i*4000))
							} else {
								_, err = f.ReadAt(buf, int64((i*4096+k*37)%(size-200)))
							}
							markReady()
							if err != nil {
								if !errors.Is(err, os.ErrClosed) {
									errs <- fmt.Errorf("worker %d call %d: %w (want nil or os.ErrClosed)", i, k, err)
								}
								return
							}
						}
					})
				}
				ready.Wait()
				time.Sleep(5 * time.Millisecond)
				var cerr error
				noPanic(t, "Close", func() { cerr = f.Close() })
				require.NoError(t, cerr)

				finished := make(chan struct{})
				go func() { done.Wait(); close(finished) }()
				select {
				case <-finished:
				case <-time.After(30 * time.Second):
					t.Fatal("workers still running 30s after Close")
				}
				close(errs)
				for err := range errs {
					t.Error(err)
				}
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				require.Equal(t, len(want), len(got), "size after Close")
				require.True(t, bytes.Equal(want, got), "content after Close differs at byte %d", firstDiff(want, got))
			}
		})
	}
}

// TestFileOpenExclExisting: O_CREATE|O_EXCL on an existing file fails as
// os.OpenFile does; so does opening a missing file.
func TestFileOpenExclExisting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "exists")
	require.NoError(t, os.WriteFile(path, []byte("hello"), 0o644))
	for _, c := range []struct {
		name string
		flag int
	}{
		{filepath.Join(dir, "exists"), os.O_RDWR | os.O_CREATE | os.O_EXCL},
		{filepath.Join(dir, "exists"), os.O_WRONLY | os.O_CREATE | os.O_EXCL},
		{filepath.Join(dir, "missing"), os.O_RDONLY},
		{filepath.Join(dir, "missing", "x"), os.O_RDWR | os.O_CREATE},
	} {
		f, err := OpenFile(c.name, c.flag, 0o644)
		of, oerr := os.OpenFile(c.name, c.flag, 0o644)
		require.Error(t, oerr)
		require.Nil(t, of)
		require.Error(t, err, "%s %s", c.name, flagName(c.flag))
		require.Nil(t, f)
		require.Empty(t, diffErr(err, oerr, c.name, c.name), "%s %s", c.name, flagName(c.flag))
		if c.flag&os.O_EXCL != 0 {
			require.ErrorIs(t, err, fs.ErrExist)
			require.ErrorIs(t, err, syscall.EEXIST)
		}
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
}

// TestFileReadOnlyWrites: writing to an O_RDONLY File fails with os.File's
// *fs.PathError (Op "write", EBADF) and changes nothing; so does Truncate
// (EINVAL).
func TestFileReadOnlyWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro")
	content := randomBytes(5000, 3)
	require.NoError(t, os.WriteFile(path, content, 0o644))
	for _, m := range openModes {
		t.Run(m.name, func(t *testing.T) {
			f := openForTest(t, path, os.O_RDONLY, m.mode)
			defer f.Close()
			of, err := os.Open(path)
			require.NoError(t, err)
			defer of.Close()
			buf := make([]byte, 100)
			cases := []struct {
				name   string
				diskio func() (int, error)
				os     func() (int, error)
			}{
				{"Write", func() (int, error) { return f.Write(buf) }, func() (int, error) { return of.Write(buf) }},
				{"WriteAt", func() (int, error) { return f.WriteAt(buf, 4090) }, func() (int, error) { return of.WriteAt(buf, 4090) }},
				{"WriteString", func() (int, error) { return f.WriteString("abc") }, func() (int, error) { return of.WriteString("abc") }},
				{"Truncate", func() (int, error) { return 0, f.Truncate(10) }, func() (int, error) { return 0, of.Truncate(10) }},
			}
			for _, c := range cases {
				var (
					n   int
					err error
				)
				noPanic(t, c.name, func() { n, err = c.diskio() })
				on, oerr := c.os()
				require.Error(t, oerr, c.name)
				require.Error(t, err, c.name)
				var pe *fs.PathError
				require.True(t, errors.As(err, &pe), "%s: %T is not a *fs.PathError", c.name, err)
				require.Equal(t, on, n, c.name)
				require.Empty(t, diffErr(err, oerr, path, path), c.name)
			}
			fi, err := f.Stat()
			require.NoError(t, err)
			require.Equal(t, int64(len(content)), fi.Size())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, content, got)
		})
	}
}

// TestFileConcurrentWritesAcrossUnalignedEOF: writers of the block holding
// an unaligned end of file (a read-modify-write whose read is short) run
// while other writers extend the file past that block. Every write must
// succeed and land.
func TestFileConcurrentWritesAcrossUnalignedEOF(t *testing.T) {
	const (
		prefill = 777
		inside  = 16 // 10-byte writes at 520+15*i: all in the block [512, 1024)
		outside = 16 // 10-byte writes at 8192+1000*i: they extend the file
	)
	for _, m := range openModes {
		t.Run(m.name, func(t *testing.T) {
			for round := range 40 {
				path := filepath.Join(t.TempDir(), fmt.Sprintf("eof%d", round))
				want := make([]byte, 8192+1000*(outside-1)+10)
				copy(want, randomBytes(prefill, byte(round)))
				require.NoError(t, os.WriteFile(path, want[:prefill], 0o644))
				f := openForTest(t, path, os.O_RDWR, m.mode)
				type w struct {
					off int64
					p   []byte
				}
				var ws []w
				for i := range inside {
					ws = append(ws, w{int64(520 + 15*i), bytes.Repeat([]byte{byte(i + 1)}, 10)})
				}
				for i := range outside {
					ws = append(ws, w{int64(8192 + 1000*i), bytes.Repeat([]byte{byte(0x80 + i)}, 10)})
				}
				for _, x := range ws {
					copy(want[x.off:], x.p)
				}
				start := make(chan struct{})
				errs := make([]error, len(ws))
				var wg sync.WaitGroup
				for i, x := range ws {
					wg.Go(func() {
						defer func() {
							if p := recover(); p != nil {
								errs[i] = fmt.Errorf("panic: %v", p)
							}
						}()
						<-start
						_, errs[i] = f.WriteAt(x.p, x.off)
					})
				}
				close(start)
				wg.Wait()
				for i, err := range errs {
					require.NoError(t, err, "round %d: WriteAt(len 10, off %d)", round, ws[i].off)
				}
				require.NoError(t, f.Close())
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				require.Equal(t, len(want), len(got), "round %d: size", round)
				require.True(t, bytes.Equal(want, got), "round %d: content differs at byte %d", round, firstDiff(want, got))
			}
		})
	}
}

// TestReadAtZeroAllocs: File.ReadAt allocates nothing, aligned (straight
// to the scheduler) or not (through a pooled bounce buffer). An error
// helper that called errors.As on every result once cost one allocation
// per read.
func TestReadAtZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, randomBytes(1<<20, 7), 0o644))
	f, err := OpenFile(path, os.O_RDONLY, 0, WithDirect(Direct))
	require.NoError(t, err)
	defer f.Close()
	require.True(t, f.Direct())
	buf := testenv.AlignedBuf(t, 8192)
	aligned := testing.AllocsPerRun(500, func() {
		if _, err := f.ReadAt(buf[:4096], 8192); err != nil {
			panic(err)
		}
	})
	unaligned := testing.AllocsPerRun(500, func() {
		if _, err := f.ReadAt(buf[1:101], 8193); err != nil {
			panic(err)
		}
	})
	require.Zero(t, aligned, "aligned ReadAt")
	require.Zero(t, unaligned, "unaligned ReadAt")

	// The default, page-cache File: hits on the caller, Read and Write.
	p, err := OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer p.Close()
	require.False(t, p.Direct())
	for name, fn := range map[string]func(){
		"ReadAt":  func() { _, err = p.ReadAt(buf[1:101], 8193) },
		"Read":    func() { _, err = p.Read(buf[:100]) },
		"Write":   func() { _, err = p.Write(buf[:100]) },
		"WriteAt": func() { _, err = p.WriteAt(buf[:100], 300) },
	} {
		require.Zero(t, testing.AllocsPerRun(500, fn), "page cache %s", name)
		require.NoError(t, err, name)
	}
}

// withoutDACOverride runs fn on an OS thread of its own that lacks the
// capabilities to bypass file permissions (CAP_DAC_OVERRIDE,
// CAP_DAC_READ_SEARCH), as an unprivileged process would: capabilities
// are per thread, and the thread ends with fn (it is never unlocked).
func withoutDACOverride(t *testing.T, fn func()) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		data[0].Effective &^= 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		fn()
		errc <- nil
	}()
	require.NoError(t, <-errc)
}

// TestDirectWriteOnlyUnreadable: a file opened O_WRONLY whose permissions
// forbid reading still gets O_DIRECT: the second descriptor is reopened
// write-only when read-write access is refused.
func TestDirectWriteOnlyUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wo")
	require.NoError(t, os.WriteFile(path, nil, 0o200))
	for _, m := range []DirectMode{Direct, DirectRequired} {
		var f *File
		var err error
		var rwErr error
		withoutDACOverride(t, func() {
			// The check the File's reopening meets.
			var fd int
			if fd, rwErr = unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0); rwErr == nil {
				unix.Close(fd)
			}
			f, err = OpenFile(path, os.O_WRONLY, 0, WithDirect(m))
		})
		require.ErrorIs(t, rwErr, syscall.EACCES, "the file must not be readable for the test to mean anything")
		if err != nil && m == DirectRequired {
			var ue *dio.UnsupportedError
			if errors.As(err, &ue) {
				testenv.Unavailable(t, "odirect", err)
			}
		}
		require.NoError(t, err, "mode %v", m)
		require.True(t, f.Direct(), "mode %v: a write-only file that may not be read lost O_DIRECT", m)
		data := randomBytes(3*4096+100, 9)
		n, err := f.WriteAt(data, 0)
		require.NoError(t, err)
		require.Equal(t, len(data), n)
		_, err = f.ReadAt(make([]byte, 10), 0)
		require.ErrorIs(t, err, syscall.EBADF)
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, data, got)
	}
}
