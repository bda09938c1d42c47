//go:build linux

package pebblevfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// readCounter is a sched.Tracer counting read requests.
type readCounter struct{ n atomic.Int64 }

func (c *readCounter) SyscallDone(sched.SyscallEvent) {}
func (c *readCounter) RequestDone(ev sched.RequestEvent) {
	if ev.Op == sched.OpRead {
		c.n.Add(1)
	}
}

func freshFS(t *testing.T, limit int64) (*FS, *readCounter) {
	t.Helper()
	var reads readCounter
	s, err := sched.New(sched.Options{Tracer: &reads})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	fs := New(diskio.WithScheduler(s)).(*FS)
	fs.FreshBytes = limit
	return fs, &reads
}

func writeTable(t *testing.T, r *rand.Rand, fs *FS, name string, n int) []byte {
	t.Helper()
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	if _, ok := f.(*writeFile); !ok {
		t.Skipf("%s is not O_DIRECT here (%T): no fresh cache", name, f)
	}
	want := randBytes(r, n)
	writeOdd(t, r, f, want)
	require.NoError(t, f.SyncData())
	require.NoError(t, f.Close())
	return want
}

// A table the FS wrote is read back, randomly and sequentially, from the
// fresh cache: the same bytes, and no read request reaches the disk.
func TestFreshCacheServesNewTables(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	fs, reads := freshFS(t, 64<<20)
	name := filepath.Join(t.TempDir(), "000100.sst")
	want := writeTable(t, r, fs, name, 3*writeBuffer+4321)
	used, files := fs.FreshStats()
	require.EqualValues(t, len(want), used)
	require.Equal(t, 1, files)

	for _, o := range []vfs.OpenOption{vfs.RandomReadsOption, vfs.SequentialReadsOption} {
		f, err := fs.Open(name, o)
		require.NoError(t, err)
		before := reads.n.Load()
		checkReadAt(t, r, f, want)
		off := 0
		for off < len(want) { // front to back, as a compaction reads
			n := min(1+r.IntN(9000), len(want)-off)
			got := make([]byte, n)
			m, err := f.ReadAt(got, int64(off))
			require.NoError(t, err)
			require.Equal(t, n, m)
			require.True(t, bytes.Equal(want[off:off+n], got))
			off += n
		}
		require.Equal(t, before, reads.n.Load(), "read requests with %T", f)
		require.NoError(t, f.Close())
	}

	// Removed through the FS: the entry goes, and so do its bytes.
	require.NoError(t, fs.Remove(name))
	used, files = fs.FreshStats()
	require.Zero(t, used)
	require.Zero(t, files)
}

// The cache holds at most its limit, oldest chunks out first; a table
// partly evicted reads the rest from the file.
func TestFreshCacheBound(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	fs, reads := freshFS(t, 2*writeBuffer)
	dir := t.TempDir()
	old := writeTable(t, r, fs, filepath.Join(dir, "000101.sst"), 3*writeBuffer)
	used, _ := fs.FreshStats()
	require.LessOrEqual(t, used, int64(2*writeBuffer))
	newer := writeTable(t, r, fs, filepath.Join(dir, "000102.sst"), writeBuffer+10)
	used, _ = fs.FreshStats()
	require.LessOrEqual(t, used, int64(2*writeBuffer))

	for _, tc := range []struct {
		name string
		want []byte
	}{{"000101.sst", old}, {"000102.sst", newer}} {
		f, err := fs.Open(filepath.Join(dir, tc.name), vfs.SequentialReadsOption)
		require.NoError(t, err)
		checkReadAt(t, r, f, tc.want)
		require.NoError(t, f.Close())
	}
	require.Positive(t, reads.n.Load(), "the evicted chunks were read from the file")
}

// A table changed behind the FS's back (another descriptor's write) is not
// served from the cache.
func TestFreshCacheChangedFile(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	fs, _ := freshFS(t, 64<<20)
	name := filepath.Join(t.TempDir(), "000103.sst")
	want := writeTable(t, r, fs, name, writeBuffer+100)
	o, err := os.OpenFile(name, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = o.WriteAt([]byte("appended"), int64(len(want)))
	require.NoError(t, err)
	_, err = o.WriteAt([]byte("XY"), 10)
	require.NoError(t, err)
	require.NoError(t, o.Close())
	copy(want[10:], "XY")
	want = append(want, "appended"...)

	f, err := fs.Open(name, vfs.SequentialReadsOption)
	require.NoError(t, err)
	require.Nil(t, f.(*seqFile).fresh, "a changed file is not served from the cache")
	checkReadAt(t, r, f, want)
	require.NoError(t, f.Close())

	// Nor is one whose writer failed or used WriteAt.
	name = filepath.Join(t.TempDir(), "000104.sst")
	w, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = w.Write(randBytes(r, writeBuffer+5))
	require.NoError(t, err)
	_, err = w.WriteAt([]byte("Z"), 3)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	f, err = fs.Open(name, vfs.RandomReadsOption)
	require.NoError(t, err)
	require.Nil(t, f.(*readFile).fresh)
	require.NoError(t, f.Close())
}

// reserver counts what is reserved in it, as pebble.Cache.Reserve would.
type reserver struct{ n atomic.Int64 }

func (r *reserver) Reserve(n int) func() {
	r.n.Add(int64(n))
	return func() { r.n.Add(-int64(n)) }
}

// With FS.Cache set, what the fresh cache holds is reserved in the block
// cache, and given back when evicted or removed.
func TestFreshCacheSharesBlockCache(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	fs, _ := freshFS(t, 3*writeBuffer)
	var share reserver
	fs.Cache = &share
	dir := t.TempDir()
	writeTable(t, r, fs, filepath.Join(dir, "000106.sst"), 2*writeBuffer+7)
	used, _ := fs.FreshStats()
	require.Equal(t, used, share.n.Load())
	require.EqualValues(t, 2*writeBuffer+7, used)
	writeTable(t, r, fs, filepath.Join(dir, "000107.sst"), 2*writeBuffer) // evicts
	used, _ = fs.FreshStats()
	require.Equal(t, used, share.n.Load())
	require.LessOrEqual(t, used, int64(3*writeBuffer))
	require.NoError(t, fs.Remove(filepath.Join(dir, "000106.sst")))
	require.NoError(t, fs.Remove(filepath.Join(dir, "000107.sst")))
	require.Zero(t, share.n.Load())
}

// The share the fresh cache may hold shrinks as random readers miss (down
// to freshFloor, dropping the oldest chunks) and grows back as it serves
// sequential readers.
func TestFreshCacheAdapts(t *testing.T) {
	const limit = 64 << 20
	c := newFreshCache(limit, nil)
	ff := &freshFile{key: fileKey{1, 1}}
	c.files[ff.key] = ff
	chunk := func(i int) { c.add(ff, int64(i)*writeBuffer, make([]byte, writeBuffer)) }
	n := 0
	for ; n < limit/writeBuffer; n++ {
		chunk(n)
	}
	used, _ := c.stats()
	require.EqualValues(t, limit, used)

	for range 40 {
		c.missedRandom(1 << 20)
	}
	require.EqualValues(t, freshFloor, c.targetBytes())
	used, _ = c.stats()
	require.LessOrEqual(t, used, int64(freshFloor))
	require.Nil(t, ff.chunks[0], "the oldest chunk goes first")
	require.NotNil(t, ff.chunks[n-1])

	// A read of a dropped chunk of a file the cache knows is a ghost
	// hit; of a held chunk, a hit.
	ff.sealed, ff.size = true, int64(n)*writeBuffer
	disk := func(p []byte, off int64) (int, error) { return len(p), nil }
	p := make([]byte, 4096)
	got, fresh, ghost, err := readFresh(ff, p, 0, disk)
	require.NoError(t, err)
	require.Equal(t, []any{4096, 0, true}, []any{got, fresh, ghost})
	got, fresh, ghost, err = readFresh(ff, p, int64(n-1)*writeBuffer, disk)
	require.NoError(t, err)
	require.Equal(t, []any{4096, 4096, false}, []any{got, fresh, ghost})
	_, _, ghost, _ = readFresh(nil, p, 0, disk)
	require.False(t, ghost)

	c.servedBytes(16 << 20)
	chunk(n)
	require.EqualValues(t, freshFloor+16<<20, c.targetBytes())
	c.servedBytes(1 << 30)
	chunk(n + 1)
	require.EqualValues(t, limit, c.targetBytes(), "never above the limit")

	var nilCache *freshCache
	nilCache.missedRandom(1 << 20)
	nilCache.servedBytes(1 << 20)
}
