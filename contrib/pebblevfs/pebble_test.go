//go:build linux

package pebblevfs

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

const testKeys = 40000

func testKey(i int) []byte { return fmt.Appendf(nil, "key-%08d", i*7919%testKeys) }

// testValue is 100-300 bytes derived from the key, so any damage shows.
func testValue(i int) []byte {
	h := sha256.Sum256(testKey(i))
	n := 100 + int(binary.LittleEndian.Uint16(h[:]))%200
	v := make([]byte, 0, n+32)
	for len(v) < n {
		v = append(v, h[:]...)
	}
	return v[:n]
}

// checksum hashes every key and value of db in order, and counts them.
func checksum(t *testing.T, db *pebble.DB) ([32]byte, int) {
	t.Helper()
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	h := sha256.New()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		h.Write(it.Key())
		h.Write(it.Value())
		n++
	}
	require.NoError(t, it.Close())
	return [32]byte(h.Sum(nil)), n
}

// Pebble opens, writes, flushes, compacts, closes and reopens on the
// adapter with every key intact, in both modes; the last keys live only in
// the WAL when the database closes, so reopening replays it.
func TestPebbleRoundTrip(t *testing.T) {
	for _, m := range []Mode{Direct, Buffered} {
		t.Run(m.String(), func(t *testing.T) { testPebbleRoundTrip(t, m) })
	}
}

func testPebbleRoundTrip(t *testing.T, mode Mode) {
	dir := t.TempDir()
	var ops opCounter
	s, err := sched.New(sched.Options{Tracer: &ops})
	require.NoError(t, err)
	defer s.Close()
	fs := NewMode(mode, diskio.WithScheduler(s))
	cache := pebble.NewCache(8 << 20)
	defer cache.Unref()
	fs.(*FS).Cache = cache // the fresh cache's memory is reserved in the block cache
	opts := &pebble.Options{FS: fs, Cache: cache, MemTableSize: 1 << 20, L0CompactionThreshold: 2, Logger: testLogger{t}}
	db, err := pebble.Open(dir, opts)
	require.NoError(t, err)

	const walOnly = 2000
	for i := 0; i < testKeys; i += 500 {
		b := db.NewBatch()
		for j := i; j < i+500; j++ {
			require.NoError(t, b.Set(testKey(j), testValue(j), nil))
		}
		sync := pebble.NoSync
		if i%5000 == 0 {
			sync = pebble.Sync
		}
		require.NoError(t, b.Commit(sync))
		if i == testKeys-walOnly-500 {
			require.NoError(t, db.Flush())
		}
	}
	// Overwrite and delete some, so compactions have work to drop.
	for j := 0; j < 1000; j++ {
		require.NoError(t, db.Delete(testKey(j), pebble.NoSync))
	}
	for j := 0; j < 1000; j++ {
		require.NoError(t, db.Set(testKey(j), testValue(j), pebble.NoSync))
	}
	require.NoError(t, db.Compact(t.Context(), []byte("key-"), []byte("key-~"), true))
	for j := range testKeys { // point reads
		v, closer, err := db.Get(testKey(j))
		require.NoError(t, err)
		require.Equal(t, testValue(j), v, "key %s", testKey(j))
		closer.Close()
	}
	// The last keys are written after the compaction, to the WAL only.
	require.NoError(t, db.Set([]byte("key-~wal"), []byte("in the log"), pebble.Sync))
	sum, n := checksum(t, db)
	require.Equal(t, testKeys+1, n)
	m := db.Metrics()
	t.Logf("before close: %d tables, %d compactions, %d flushes", m.Total().TablesCount, m.Compact.Count, m.Flush.Count)
	require.Positive(t, m.Compact.Count)

	// A copy of the directory taken while the database is open (what a
	// crash of the process leaves: the WAL written to its last record, the
	// fresh cache and block cache gone) must reopen with the same contents.
	crashed := copyDir(t, dir)
	cdb, err := pebble.Open(crashed, &pebble.Options{FS: fs, Logger: testLogger{t}})
	require.NoError(t, err)
	csum, cn := checksum(t, cdb)
	require.Equal(t, n, cn)
	require.Equal(t, sum, csum, "contents after a crash")
	require.NoError(t, cdb.Close())

	require.NoError(t, db.Close())

	db, err = pebble.Open(dir, &pebble.Options{FS: fs, Logger: testLogger{t}})
	require.NoError(t, err)
	defer db.Close()
	sum2, n2 := checksum(t, db)
	require.Equal(t, n, n2)
	require.Equal(t, sum, sum2, "contents after reopen")
	v, closer, err := db.Get([]byte("key-~wal"))
	require.NoError(t, err)
	require.Equal(t, "in the log", string(v))
	closer.Close()
	require.NoError(t, db.Compact(t.Context(), []byte("key-"), []byte("key-~~"), true))
	sum3, _ := checksum(t, db)
	require.Equal(t, sum, sum3, "contents after a second compaction")

	// The data went through the diskio scheduler. In buffered mode, reads
	// and writes the page cache serves complete on the caller (RWF_NOWAIT)
	// and may never reach the scheduler; syncs always do, and so do the
	// syncs of the MANIFEST and the directory (fsync) and the removal of
	// obsolete files (unlink), which vfs.Default would make on the caller.
	want := []sched.Op{sched.OpRead, sched.OpWrite, sched.OpFdatasync, sched.OpFsync, sched.OpUnlink}
	if mode == Buffered {
		want = []sched.Op{sched.OpFdatasync, sched.OpFsync, sched.OpUnlink}
	}
	for _, op := range []sched.Op{sched.OpRead, sched.OpWrite, sched.OpFdatasync, sched.OpFsync, sched.OpUnlink} {
		t.Logf("%s requests: %d", op, ops.n[op].Load())
	}
	t.Logf("unlinkat calls on callers: %d", ops.unlinkat.Load())
	for _, op := range want {
		n := ops.n[op].Load()
		if op == sched.OpUnlink {
			n = ops.removals(s)
		}
		require.Positive(t, n, "%s requests on %s", op, s.Backend())
	}
	// And the files were opened in the mode asked for.
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	checked := 0
	for _, e := range ents {
		if kindOf(e.Name()) != data {
			continue
		}
		f, err := fs.Open(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.Equal(t, mode == Direct, f.(*readFile).f.Direct(), "%s in %v mode", e.Name(), mode)
		require.NoError(t, f.Close())
		checked++
	}
	require.Positive(t, checked)
}

// copyDir copies the files of dir to a new directory, as a crash would
// leave them.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, e.Name()), b, 0o644))
	}
	return to
}

// opCounter is a sched.Tracer counting requests by kind.
type opCounter struct {
	n        [8]atomic.Int64
	unlinkat atomic.Int64 // unlinkat calls the scheduler made on its callers
}

func (c *opCounter) SyscallDone(ev sched.SyscallEvent) {
	if ev.Call == sched.SysUnlinkat {
		c.unlinkat.Add(1)
	}
}

// removals counts the removals that went through s: its requests on
// io_uring; on Linux AIO and the blocking backend (io_uring refused, as
// by a container's seccomp profile) Unlinkat is the system call on the
// caller, made through the scheduler's traced calls, and no request.
func (c *opCounter) removals(s *sched.Scheduler) int64 {
	if s.Backend() == sched.URing {
		return c.n[sched.OpUnlink].Load()
	}
	return c.unlinkat.Load()
}
func (c *opCounter) RequestDone(ev sched.RequestEvent) {
	if int(ev.Op) < len(c.n) {
		c.n[ev.Op].Add(1)
	}
}

// testLogger keeps Pebble's informational messages out of the test output.
type testLogger struct{ t *testing.T }

func (testLogger) Infof(string, ...any)                {}
func (l testLogger) Errorf(format string, args ...any) { l.t.Errorf(format, args...) }
func (l testLogger) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
