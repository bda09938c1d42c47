package crash

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/internal/testenv"
)

func TestMain(m *testing.M) {
	MaybeChild()
	testenv.InstallFilter() // DISKIO_TEST_SECCOMP
	os.Exit(m.Run())
}

// iterations is 6 unless DISKIO_CRASH_ITERATIONS says otherwise (the
// issue's 200-kill run: DISKIO_CRASH_ITERATIONS=200 go test -run
// TestRun ./internal/crash/).
func iterations(t *testing.T) int {
	if s := os.Getenv("DISKIO_CRASH_ITERATIONS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		return n
	}
	return 6
}

func TestRun(t *testing.T) {
	for _, c := range []struct {
		name string
		o    AppendOptions
	}{
		{"datasync", AppendOptions{}},
		{"sync-prealloc", AppendOptions{FullSync: true, Preallocate: true, Writers: 8}},
		{"direct-datasync", AppendOptions{Direct: true}},
		{"direct-sync-prealloc", AppendOptions{FullSync: true, Preallocate: true, Writers: 8, Direct: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Run(context.Background(), Options{Dir: t.TempDir(), Iterations: iterations(t), AppendOptions: c.o})
			t.Log(rep)
			require.NoError(t, err)
			require.NotZero(t, rep.Acked, "nothing was acknowledged: the test tested nothing")
		})
	}
}

func TestRunDiskchecker(t *testing.T) {
	rep, err := RunDiskchecker(context.Background(), Options{Dir: t.TempDir(), Iterations: 3})
	t.Log(rep)
	require.NoError(t, err)
	require.NotZero(t, rep.Acked)
}

// TestVerifyCatchesLoss: the checks can fail: a log that lost an
// acknowledged record, or holds a well-formed record out of place.
func TestVerifyCatchesLoss(t *testing.T) {
	dir := t.TempDir()
	data := header(42)
	var offs []int
	for seq := range uint64(10) {
		offs = append(offs, len(data))
		data = appendRecord(data, 42, seq, recordLen(42, seq, 9000))
	}
	dp, ap := filepath.Join(dir, "log"), filepath.Join(dir, "acks")
	require.NoError(t, os.WriteFile(dp, data, 0o644))
	require.NoError(t, os.WriteFile(ap, []byte("3\n10\n"), 0o644))
	rep, err := Verify(dp, ap, 0)
	require.NoError(t, err)
	require.Equal(t, uint64(10), rep.Records)

	torn := append([]byte(nil), data[:offs[7]+5]...) // record 7 half written
	require.NoError(t, os.WriteFile(dp, torn, 0o644))
	rep, err = Verify(dp, ap, 0)
	require.ErrorContains(t, err, "10 records acknowledged, only 7 intact")
	require.Equal(t, 1, rep.TornTails)

	flipped := append([]byte(nil), data...)
	flipped[offs[4]+30] ^= 1 // a bit of record 4 rots
	require.NoError(t, os.WriteFile(dp, flipped, 0o644))
	_, err = Verify(dp, ap, 0)
	require.ErrorContains(t, err, "only 4 intact")

	swapped := append(append(append([]byte(nil), data[:offs[2]]...), data[offs[3]:offs[4]]...), data[offs[2]:offs[3]]...)
	require.NoError(t, os.WriteFile(dp, swapped, 0o644))
	_, err = Verify(dp, ap, 0)
	require.ErrorContains(t, err, "record 3 where record 2 belongs")
}

func TestRunChildFailureReported(t *testing.T) {
	dir := t.TempDir()
	// A log whose header is not ours: the child cannot recover it and
	// must exit with the reason, which Run reports.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "crash.log"), []byte("not a log at all"), 0o644))
	o := Options{Dir: dir, Iterations: 1, KillMin: time.Second}
	o.Path = filepath.Join(dir, "crash.log")
	_, err := runChild(context.Background(), o, childSpec{Mode: "append", Append: AppendOptions{Path: o.Path}}, time.Second, &Report{})
	require.ErrorContains(t, err, "no valid header")
}
