//go:build linux

package pebblevfs

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// writeOdd writes want to f in pieces of odd sizes, checking Stat's size
// after each.
func writeOdd(t *testing.T, r *rand.Rand, f vfs.File, want []byte) {
	t.Helper()
	for done := 0; done < len(want); {
		n := min(len(want)-done, 1+r.IntN(9000))
		m, err := f.Write(want[done : done+n])
		require.NoError(t, err)
		require.Equal(t, n, m)
		done += n
		fi, err := f.Stat()
		require.NoError(t, err)
		require.EqualValues(t, done, fi.Size())
	}
}

func checkReadAt(t *testing.T, r *rand.Rand, f vfs.File, want []byte) {
	t.Helper()
	for range 200 {
		off := r.IntN(len(want))
		n := 1 + r.IntN(min(len(want)-off, 20000))
		got := make([]byte, n)
		m, err := f.ReadAt(got, int64(off))
		require.NoError(t, err, "ReadAt(%d, %d)", n, off)
		require.Equal(t, n, m)
		require.True(t, bytes.Equal(want[off:off+n], got), "ReadAt(%d, %d) differs", n, off)
	}
	// Past the end: what is there, then io.EOF.
	got := make([]byte, 100)
	m, err := f.ReadAt(got, int64(len(want)-7))
	require.Equal(t, io.EOF, err)
	require.Equal(t, 7, m)
	require.Equal(t, want[len(want)-7:], got[:7])
}

func TestDataFileRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fs := New()
	name := filepath.Join(t.TempDir(), "000007.sst")
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	want := randBytes(r, 3<<20+12345)
	writeOdd(t, r, f, want)
	checkReadAt(t, r, f, want) // reads what is still buffered too
	require.NoError(t, f.SyncData())
	require.NoError(t, f.Close())

	fi, err := os.Stat(name)
	require.NoError(t, err)
	require.EqualValues(t, len(want), fi.Size(), "size on disk is exact")
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got))

	f, err = fs.Open(name, vfs.RandomReadsOption)
	require.NoError(t, err)
	defer f.Close()
	rf, ok := f.(*readFile)
	require.True(t, ok, "an sstable is a diskio file, got %T", f)
	t.Logf("direct I/O: %v", rf.f.Direct())
	st, err := f.Stat()
	require.NoError(t, err)
	require.EqualValues(t, len(want), st.Size())
	checkReadAt(t, r, f, want)
}

// Writes to a WAL reach the file on every Write, exactly: no padding, at
// any time (what a crash leaves is what was written).
func TestWALWriteThrough(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, direct := range []bool{false, true} {
		name := filepath.Join(t.TempDir(), "000002.log")
		fs := New().(*FS)
		fs.WALDirect = direct
		f, err := fs.Create(name, "pebble-wal")
		require.NoError(t, err)
		require.Equal(t, direct && directHere(t), f.(*readFile).f.Direct(), "WALDirect %v", direct)
		var want []byte
		for i := range 50 {
			rec := randBytes(r, 1+r.IntN(3000))
			if i%10 == 9 {
				rec = randBytes(r, 1+r.IntN(40000)) // whole blocks in the middle
			}
			_, err := f.Write(rec)
			require.NoError(t, err)
			want = append(want, rec...)
			got, err := os.ReadFile(name) // another descriptor, through the page cache
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, got), "after %d bytes", len(want))
			if i%7 == 0 {
				require.NoError(t, f.SyncData())
			}
		}
		require.NoError(t, f.SyncData())
		st, err := f.Stat()
		require.NoError(t, err)
		require.EqualValues(t, len(want), st.Size())
		require.NoError(t, f.Close())
		got, err := os.ReadFile(name)
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got))
	}
}

// directHere reports whether the test directory takes O_DIRECT.
func directHere(t *testing.T) bool {
	t.Helper()
	f, err := New().Create(filepath.Join(t.TempDir(), "probe.sst"), vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	defer f.Close()
	_, ok := f.(*writeFile)
	return ok
}

// SyncTo promises no durability (fullSync false) but leaves the prefix
// written; SyncData leaves the exact size on disk.
func TestSyncTo(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	name := filepath.Join(t.TempDir(), "000003.sst")
	f, err := New().Create(name, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	defer f.Close()
	want := randBytes(r, 10000)
	_, err = f.Write(want)
	require.NoError(t, err)
	full, err := f.SyncTo(5000)
	require.NoError(t, err)
	require.False(t, full)
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(got), 5000)
	require.Equal(t, want[:5000], got[:5000])
	// A prefix already written: nothing to do.
	full, err = f.SyncTo(100)
	require.NoError(t, err)
	require.False(t, full)
	require.NoError(t, f.SyncData())
	fi, err := os.Stat(name)
	require.NoError(t, err)
	require.EqualValues(t, len(want), fi.Size())
}

// Preallocate reserves blocks without changing the size, as Pebble's
// vfs.Default does (Pebble finds an sstable's footer at its end).
func TestPreallocate(t *testing.T) {
	name := filepath.Join(t.TempDir(), "000004.log")
	f, err := New().Create(name, "pebble-wal")
	require.NoError(t, err)
	_, err = f.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, f.Preallocate(0, 1<<20))
	fi, err := f.Stat()
	require.NoError(t, err)
	require.EqualValues(t, 5, fi.Size())
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(int(f.Fd()), &st))
	require.GreaterOrEqual(t, st.Blocks*512, int64(1<<20), "blocks reserved")
	require.NoError(t, f.Close())
	require.NoError(t, unix.Stat(name, &st))
	require.EqualValues(t, 5, st.Size)
}

// A reused WAL is overwritten from the start and keeps its old size and
// its old bytes past what was written, as with os.File.
func TestReuseForWrite(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	old := randBytes(r, 300000)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "000001.log"), old, 0o644))
	fs := New()
	f, err := fs.ReuseForWrite(filepath.Join(dir, "000001.log"), filepath.Join(dir, "000009.log"), "pebble-wal")
	require.NoError(t, err)
	want := bytes.Clone(old)
	at := 0
	for _, n := range []int{100, 5000, 1, 270000} {
		p := randBytes(r, n)
		_, err := f.Write(p)
		require.NoError(t, err)
		copy(want[at:], p)
		at += n
		require.NoError(t, f.SyncData())
		got, err := os.ReadFile(filepath.Join(dir, "000009.log"))
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "after writing %d bytes", at)
	}
	_, err = os.Stat(filepath.Join(dir, "000001.log"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, f.Close())
}

// A file opened for sequential reads reads ahead through a stream and
// returns the same bytes as the file, across buffer edges, after seeks
// back, short skips forward (within the read-ahead) and long ones (a new
// stream), and at the end; with one read in flight and with the default.
func TestSequentialReads(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	name := filepath.Join(t.TempDir(), "000005.sst")
	want := randBytes(r, 7*readAhead+777)
	require.NoError(t, os.WriteFile(name, want, 0o644))
	for _, depth := range []int{1, 0} {
		fs := New().(*FS)
		fs.ReadAhead = depth
		f, err := fs.Open(name, vfs.SequentialReadsOption)
		require.NoError(t, err)
		if sf, ok := f.(*seqFile); ok {
			wantDepth := depth
			if depth == 0 {
				wantDepth = DefaultReadAhead
			}
			require.Equal(t, wantDepth, sf.depth)
		} else {
			t.Logf("not a direct file here (%T): no read-ahead of ours", f)
		}
		off := 0
		for off < len(want) {
			n := min(1+r.IntN(9000), len(want)-off)
			if r.IntN(20) == 0 { // skip forward: a little, or past the read-ahead
				off = min(off+r.IntN(3*readAhead), len(want)-n)
			}
			got := make([]byte, n)
			m, err := f.ReadAt(got, int64(off))
			require.NoError(t, err)
			require.Equal(t, n, m)
			require.True(t, bytes.Equal(want[off:off+n], got), "at %d", off)
			off += n
		}
		checkReadAt(t, r, f, want) // random offsets: seeks both ways
		got := make([]byte, 10)
		m, err := f.ReadAt(got, int64(len(want)))
		require.Equal(t, io.EOF, err)
		require.Zero(t, m)
		require.NoError(t, f.Close())
	}
}

// WriteAt, on a file opened read-write, writes where asked and the append
// stream continues after it.
func TestOpenReadWriteWriteAt(t *testing.T) {
	name := filepath.Join(t.TempDir(), "000006.blob")
	f, err := New().OpenReadWrite(name, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.Write(bytes.Repeat([]byte("a"), 6000))
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("XYZ"), 4095)
	require.NoError(t, err)
	_, err = f.Write([]byte("tail"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	want := bytes.Repeat([]byte("a"), 6000)
	copy(want[4095:], "XYZ")
	want = append(want, "tail"...)
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// Fd is the descriptor of the named file; metadata files stay on the OS.
func TestFdAndRouting(t *testing.T) {
	dir := t.TempDir()
	fs := New()
	f, err := fs.Create(filepath.Join(dir, "000008.sst"), vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	defer f.Close()
	var a, b unix.Stat_t
	require.NoError(t, unix.Fstat(int(f.Fd()), &a))
	require.NoError(t, unix.Stat(filepath.Join(dir, "000008.sst"), &b))
	require.Equal(t, b.Ino, a.Ino)

	m, err := fs.Create(filepath.Join(dir, "MANIFEST-000001"), vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	defer m.Close()
	_, isOurs := m.(*writeFile)
	require.False(t, isOurs, "MANIFEST goes to vfs.Default")
	switch f.(type) {
	case *writeFile, *gatherFile: // direct, or where O_DIRECT was refused
	default:
		t.Fatalf("an sstable is a %T", f)
	}
}

// WAL files are O_DSYNC only with WALDSync; data files never are.
func TestWALDSync(t *testing.T) {
	dir := t.TempDir()
	flags := func(fs vfs.FS, name string) int {
		f, err := fs.Create(filepath.Join(dir, name), vfs.WriteCategoryUnspecified)
		require.NoError(t, err)
		defer f.Close()
		fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		require.NoError(t, err)
		return fl
	}
	fs := New()
	require.Zero(t, flags(fs, "000001.log")&unix.O_DSYNC)
	fs.(*FS).WALDSync = true
	require.NotZero(t, flags(fs, "000003.log")&unix.O_DSYNC)
	require.Zero(t, flags(fs, "000002.sst")&unix.O_DSYNC)
}

// In buffered mode every file of Pebble's is a page-cache diskio file.
// WAL writes reach the file at once (visible to another descriptor); data
// files gather writes of odd sizes and read back, Stat and sync exactly.
// SyncTo starts write-back without claiming durability; Prefetch and
// sequential reads go to the kernel.
func TestBufferedMode(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	dir := t.TempDir()
	fs := NewMode(Buffered)
	for _, name := range []string{"000010.sst", "000011.log", "000012.blob"} {
		path := filepath.Join(dir, name)
		f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
		require.NoError(t, err)
		var rf *readFile
		switch f := f.(type) {
		case *readFile:
			rf = f
			require.Equal(t, wal, kindOf(name), "%s written through", name)
		case *gatherFile:
			rf = &f.readFile
			require.Equal(t, data, kindOf(name), "%s gathered", name)
		default:
			t.Fatalf("%s: got %T", name, f)
		}
		require.False(t, rf.f.Direct(), "%s is O_DIRECT in buffered mode", name)
		want := randBytes(r, 1<<20+333)
		if kindOf(name) == wal {
			writeOdd(t, r, f, want)
			got, err := os.ReadFile(path) // every Write is in the page cache
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, got), name)
		} else {
			for done := 0; done < len(want); { // without a Stat between: gathered
				n := min(len(want)-done, 1+r.IntN(9000))
				if r.IntN(50) == 0 {
					n = min(len(want)-done, writeBuffer+r.IntN(1000)) // larger than the buffer
				}
				m, err := f.Write(want[done : done+n])
				require.NoError(t, err)
				require.Equal(t, n, m)
				done += n
			}
			checkReadAt(t, r, f, want) // reads what was gathered
			st, err := f.Stat()
			require.NoError(t, err)
			require.EqualValues(t, len(want), st.Size())
		}
		full, err := f.SyncTo(int64(len(want) / 2))
		require.NoError(t, err)
		require.False(t, full, "SyncTo only starts write-back")
		require.NoError(t, f.SyncData())
		require.NoError(t, f.Close())
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), name)

		f, err = fs.Open(path, vfs.SequentialReadsOption)
		require.NoError(t, err)
		require.NoError(t, f.Prefetch(0, int64(len(want))))
		checkReadAt(t, r, f, want)
		require.NoError(t, f.Close())
	}
	m, err := ParseMode("buffered")
	require.NoError(t, err)
	require.Equal(t, Buffered, m)
	_, err = ParseMode("odirect")
	require.Error(t, err)
}
