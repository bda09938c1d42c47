//go:build linux

package pebblevfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// Removals, and syncs of the files and directories vfs.Default keeps,
// go through the FS's scheduler, with vfs.Default's results.
func TestMetaThroughScheduler(t *testing.T) {
	var ops opCounter
	s, err := sched.New(sched.Options{Tracer: &ops, NoInline: true})
	require.NoError(t, err)
	defer s.Close()
	fs := New(diskio.WithScheduler(s))
	dir := t.TempDir()

	d, err := fs.OpenDir(dir)
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	require.NoError(t, d.SyncData())
	require.NoError(t, d.Close())

	m, err := fs.Create(filepath.Join(dir, "MANIFEST-000001"), vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = m.Write([]byte("manifest"))
	require.NoError(t, err)
	require.NoError(t, m.Sync())
	require.NoError(t, m.SyncData())
	require.NoError(t, m.Close())
	require.EqualValues(t, 3, ops.n[sched.OpFsync].Load())
	require.EqualValues(t, 1, ops.n[sched.OpFdatasync].Load())

	sst, err := fs.Create(filepath.Join(dir, "000002.sst"), vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = sst.Write(make([]byte, 300<<10))
	require.NoError(t, err)
	require.NoError(t, sst.Close())
	for _, name := range []string{"MANIFEST-000001", "000002.sst"} {
		require.NoError(t, fs.Remove(filepath.Join(dir, name)))
		_, err := os.Stat(filepath.Join(dir, name))
		require.True(t, os.IsNotExist(err))
	}
	// Missing files and directories, as os.Remove says.
	err = fs.Remove(filepath.Join(dir, "000002.sst"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "x"), nil, 0o644))
	err = fs.Remove(filepath.Join(dir, "sub"))
	require.Error(t, err)
	require.Equal(t, "remove", err.(*os.PathError).Op)
	require.NoError(t, fs.Remove(filepath.Join(dir, "sub", "x")))
	require.NoError(t, fs.Remove(filepath.Join(dir, "sub")))
	require.GreaterOrEqual(t, ops.removals(s), int64(5), "removals through the scheduler on %s", s.Backend())
}
