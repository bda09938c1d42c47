//go:build linux

package pebblevfs

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
)

// Pebble's metamorphic runs on disk skip their restarts, so this test
// crashes Pebble on the adapter for real: a child process (this test
// binary again) opens the database and commits synced batches one after
// another, printing the number of each as its Commit returns; the parent
// SIGKILLs it at a random moment (one time in six within 10 ms of its
// starting to open the database, which replays the WAL of the crash
// before), reopens the database on the adapter and checks that every
// batch the child acknowledged is there, that no batch is there in part,
// that the batches are a prefix of the ones written, and
// pebble.DebugCheckLevels. The memtable is small, so kills land in
// flushes, compactions and table removals too.
//
// Environment:
//
//	PEBBLEVFS_CRASH_KILLS     kills per variant (default 100)
//	PEBBLEVFS_CRASH_VARIANTS  as PEBBLEVFS_META_VARIANTS (default direct,buffered)
//	PEBBLEVFS_CRASH_SEED      the seed of the kill times (default: the time)
//	PEBBLEVFS_CRASH_DIR       where the databases go (default a temporary
//	                          directory; must allow O_DIRECT)
//	PEBBLEVFS_CRASH_LOG       a file each variant's summary is appended to
const (
	crashEnvDir     = "PEBBLEVFS_CRASH_CHILD_DIR"
	crashEnvVariant = "PEBBLEVFS_CRASH_CHILD_VARIANT"

	// crashWindow: batch d (a multiple of 10, d ≥ crashWindow) deletes
	// the keys of batches d-crashWindow-9 ... d-crashWindow with one range
	// deletion, so the live data stays bounded and compactions drop some.
	crashWindow = 600
	crashHot    = 32 // hot/NN is overwritten by every 32nd batch
)

// crashKeys is how many b/ keys batch i sets.
func crashKeys(i int) int { return 4 + i%13 }

func crashKey(i, j int) []byte { return fmt.Appendf(nil, "b/%08d/%02d", i, j) }

// crashValue is 100-999 bytes derived from (i, j), so any damage shows.
func crashValue(i, j int) []byte {
	var seed [16]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(i))
	binary.LittleEndian.PutUint64(seed[8:], uint64(j))
	h := sha256.Sum256(seed[:])
	n := 100 + (i*31+j*17)%900
	v := make([]byte, 0, n+32)
	for len(v) < n {
		v = append(v, h[:]...)
	}
	return v[:n]
}

// crashDeleted reports whether batch j's keys are deleted once batches
// up to p are in.
func crashDeleted(j, p int) bool {
	d := (j + crashWindow + 9) / 10 * 10 // the batch whose range deletion covers j
	return d <= p
}

// crashBatch fills b with batch i.
func crashBatch(b *pebble.Batch, i int) error {
	for j := range crashKeys(i) {
		if err := b.Set(crashKey(i, j), crashValue(i, j), nil); err != nil {
			return err
		}
	}
	if i >= crashWindow && i%10 == 0 {
		lo, hi := i-crashWindow-9, i-crashWindow+1
		if err := b.DeleteRange(fmt.Appendf(nil, "b/%08d/", max(lo, 0)), fmt.Appendf(nil, "b/%08d/", hi), nil); err != nil {
			return err
		}
	}
	if err := b.Set(fmt.Appendf(nil, "hot/%02d", i%crashHot), strconv.AppendInt(nil, int64(i), 10), nil); err != nil {
		return err
	}
	return b.Set([]byte("last"), strconv.AppendInt(nil, int64(i), 10), nil)
}

func crashOptions(t *testing.T, v metaVariant) (*pebble.Options, func()) {
	cache := pebble.NewCache(8 << 20)
	fs := v.fs()
	fs.Cache = cache
	opts := &pebble.Options{
		FS:                    fs,
		Cache:                 cache,
		MemTableSize:          256 << 10,
		L0CompactionThreshold: 2,
		LBaseMaxBytes:         1 << 20,
		Logger:                testLogger{t},
	}
	return opts, cache.Unref
}

func TestCrash(t *testing.T) {
	if dir := os.Getenv(crashEnvDir); dir != "" {
		crashChild(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("-short: no kill -9 crashes")
	}
	kills := 100
	if s := os.Getenv("PEBBLEVFS_CRASH_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "PEBBLEVFS_CRASH_KILLS")
		kills = n
	}
	variants := []string{"direct", "buffered"}
	if s := os.Getenv("PEBBLEVFS_CRASH_VARIANTS"); s != "" {
		variants = strings.Split(s, ",")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PEBBLEVFS_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "PEBBLEVFS_CRASH_SEED")
		seed = v
	}
	if !directHere(t) {
		t.Skip("the test directory does not take O_DIRECT")
	}
	for _, name := range variants {
		v, err := parseVariant(name)
		require.NoError(t, err)
		t.Run(v.name, func(t *testing.T) {
			root := os.Getenv("PEBBLEVFS_CRASH_DIR")
			if root == "" {
				root = t.TempDir()
			}
			dir, err := os.MkdirTemp(root, "crash-"+v.name+"-")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(dir) })
			testCrash(t, v, dir, kills, seed)
		})
	}
}

func testCrash(t *testing.T, v metaVariant, dir string, kills int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d, %d kills, %s", seed, kills, dir)
	start := time.Now()
	maxAck, last, duringOpen, removed := -1, -1, 0, 0
	for k := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrash$")
		cmd.Env = append(os.Environ(), crashEnvDir+"="+dir, crashEnvVariant+"="+v.name)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())

		// Read the child's acknowledgements until it dies.
		var acked atomic.Int64
		acked.Store(-1)
		opening, opened := make(chan struct{}), make(chan struct{})
		var isOpen atomic.Bool
		done := make(chan error, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				line := sc.Text()
				if rest, ok := strings.CutPrefix(line, "ack "); ok {
					if n, err := strconv.Atoi(rest); err == nil {
						acked.Store(int64(n))
					}
				} else if line == "opening" {
					close(opening)
				} else if line == "open" {
					isOpen.Store(true)
					close(opened)
				}
			}
			done <- sc.Err()
		}()
		// One time in six, kill it while it opens the database:
		// replaying the last crash's WAL, flushing it, deleting obsolete
		// files. Else while it commits.
		during, wait := opened, time.Duration(10+rng.IntN(290))*time.Millisecond
		if rng.IntN(6) == 0 {
			during, wait = opening, time.Duration(rng.IntN(10000))*time.Microsecond
		}
		select {
		case <-during:
		case <-time.After(time.Minute):
			t.Fatalf("kill %d: the child did not open the database in a minute:\n%s", k, stderr.String())
		}
		time.Sleep(wait)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		require.NoError(t, <-done)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: the child ended before it was killed: %v\n%s", k, err, stderr.String())
		}
		if !isOpen.Load() {
			duringOpen++
		}
		if a := int(acked.Load()); a > maxAck {
			maxAck = a
		}

		last, removed = crashCheck(t, v, dir, k, maxAck, removed)
	}
	line := fmt.Sprintf("%s crash variant=%s seed=%d kills=%d (%d before Open returned) batches=%d acknowledged=%d removed=%d elapsed=%.1fs: every acknowledged batch present, no batch in part, DebugCheckLevels clean",
		time.Now().UTC().Format(time.RFC3339), v.name, seed, kills, duringOpen, last+1, maxAck+1, removed, time.Since(start).Seconds())
	t.Log(line)
	if p := os.Getenv("PEBBLEVFS_CRASH_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		require.NoError(t, err)
		fmt.Fprintln(f, line)
		require.NoError(t, f.Close())
	}
}

// crashCheck reopens the database after kill k and checks it: batches
// 0..last all there but the ones deleted, none after, last ≥ maxAck. It
// returns last, and removed plus the removals of the reopening.
func crashCheck(t *testing.T, v metaVariant, dir string, k, maxAck, removed int) (int, int) {
	opts, unref := crashOptions(t, v)
	defer unref()
	check := &fdCheckFS{FS: opts.FS.(*FS), v: v, opened: map[string]int{}}
	opts.FS = check
	db, err := pebble.Open(dir, opts)
	require.NoError(t, err, "kill %d: reopen", k)
	defer func() { require.NoError(t, db.Close(), "kill %d", k) }()
	require.NoError(t, pebble.DebugCheckLevels(db), "kill %d: DebugCheckLevels", k)

	last := -1
	val, closer, err := db.Get([]byte("last"))
	if err == nil {
		last, err = strconv.Atoi(string(val))
		closer.Close()
		require.NoError(t, err)
	} else {
		require.ErrorIs(t, err, pebble.ErrNotFound)
	}
	require.GreaterOrEqual(t, last, maxAck, "kill %d: batch %d was acknowledged, the database ends at %d", k, maxAck, last)

	// The b/ keys: every batch up to last whole unless deleted, none after.
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte("b/"), UpperBound: []byte("b0")})
	require.NoError(t, err)
	seen := map[int]int{}
	for it.First(); it.Valid(); it.Next() {
		var i, j int
		_, err := fmt.Sscanf(string(it.Key()), "b/%08d/%02d", &i, &j)
		require.NoError(t, err, "kill %d: key %q", k, it.Key())
		require.True(t, i <= last && !crashDeleted(i, last), "kill %d: key %q of a batch that should not be there (last %d)", k, it.Key(), last)
		require.Equal(t, crashValue(i, j), it.Value(), "kill %d: key %q", k, it.Key())
		seen[i]++
	}
	require.NoError(t, it.Close())
	for i := 0; i <= last; i++ {
		if !crashDeleted(i, last) {
			require.Equal(t, crashKeys(i), seen[i], "kill %d: batch %d (last %d) has %d keys of %d", k, i, last, seen[i], crashKeys(i))
		}
	}
	for h := range crashHot {
		want := last - ((last-h)%crashHot+crashHot)%crashHot // the last batch i ≤ last with i%crashHot == h
		val, closer, err := db.Get(fmt.Appendf(nil, "hot/%02d", h))
		if want < 0 {
			require.ErrorIs(t, err, pebble.ErrNotFound, "kill %d: hot/%02d", k, h)
			continue
		}
		require.NoError(t, err, "kill %d: hot/%02d", k, h)
		require.Equal(t, strconv.Itoa(want), string(val), "kill %d: hot/%02d", k, h)
		closer.Close()
	}
	check.mu.Lock()
	defer check.mu.Unlock()
	require.Empty(t, check.wrong, "kill %d: files opened against variant %s", k, v.name)
	return last, removed + check.removed
}

// crashChild commits batches until it is killed.
func crashChild(t *testing.T, dir string) {
	v, err := parseVariant(os.Getenv(crashEnvVariant))
	require.NoError(t, err)
	opts, unref := crashOptions(t, v)
	defer unref()
	out := os.Stdout
	_, err = io.WriteString(out, "opening\n")
	require.NoError(t, err)
	db, err := pebble.Open(dir, opts)
	require.NoError(t, err)
	next := 0
	if val, closer, err := db.Get([]byte("last")); err == nil {
		n, err := strconv.Atoi(string(val))
		closer.Close()
		require.NoError(t, err)
		next = n + 1
	} else {
		require.ErrorIs(t, err, pebble.ErrNotFound)
	}
	_, err = io.WriteString(out, "open\n")
	require.NoError(t, err)
	for i := next; ; i++ {
		b := db.NewBatch()
		require.NoError(t, crashBatch(b, i))
		require.NoError(t, b.Commit(pebble.Sync))
		require.NoError(t, b.Close())
		_, err := fmt.Fprintf(out, "ack %d\n", i)
		require.NoError(t, err)
	}
}
