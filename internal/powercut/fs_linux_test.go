package powercut

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// mounted is a new FS mounted on a directory of the test's, unmounted at
// cleanup; the test skips where FUSE cannot be mounted.
func mounted(t *testing.T) (*FS, string) {
	t.Helper()
	f, dir := New(), t.TempDir()
	if err := f.Mount(dir); err != nil {
		if errors.Is(err, ErrNoFUSE) {
			t.Skipf("needs FUSE (/dev/fuse, and root or fusermount3 from fuse3): %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { require.NoError(t, f.Unmount()) })
	return f, dir
}

// reboot cuts the power, unmounts and mounts again.
func reboot(t *testing.T, f *FS, dir string, tear bool, rng *rand.Rand) {
	t.Helper()
	f.Cut(tear, rng)
	require.NoError(t, f.Unmount())
	require.NoError(t, f.Mount(dir))
}

func create(t *testing.T, name string, data []byte, sync bool) {
	t.Helper()
	fd, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	_, err = fd.Write(data)
	require.NoError(t, err)
	if sync {
		require.NoError(t, fd.Sync())
	}
	require.NoError(t, fd.Close())
}

func syncDir(t *testing.T, dir string) {
	t.Helper()
	d, err := os.Open(dir)
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	require.NoError(t, d.Close())
}

func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// TestPowerCutFilesystem checks that the filesystem loses what a power
// cut loses, and keeps what each sync makes durable, through the kernel's
// FUSE client with plain system calls.
func TestPowerCutFilesystem(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := record(1, 1, 3*Page+100)

	t.Run("fsync keeps data, size and a synced directory's entry", func(t *testing.T) {
		f, dir := mounted(t)
		name := filepath.Join(dir, "a")
		create(t, name, data, true)
		syncDir(t, dir)
		reboot(t, f, dir, false, rng)
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, data, b)
		o := f.Ops()
		require.NotZero(t, o.Fsyncs)
		require.NotZero(t, o.Dirsyncs)
	})

	t.Run("fdatasync keeps data and size", func(t *testing.T) {
		f, dir := mounted(t)
		name := filepath.Join(dir, "a")
		create(t, name, nil, true)
		syncDir(t, dir)
		fd, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = fd.Write(data)
		require.NoError(t, err)
		require.NoError(t, unix.Fdatasync(int(fd.Fd())))
		require.NoError(t, fd.Close())
		reboot(t, f, dir, false, rng)
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, data, b)
		require.NotZero(t, f.Ops().Datasyncs)
	})

	t.Run("a write without a sync is lost, close's flush is not a sync", func(t *testing.T) {
		f, dir := mounted(t)
		name := filepath.Join(dir, "a")
		create(t, name, data[:Page], true)
		syncDir(t, dir)
		fd, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = fd.Write(data[Page:])
		require.NoError(t, err)
		require.NoError(t, fd.Close())
		require.NotZero(t, f.Ops().Flushes)
		reboot(t, f, dir, false, rng)
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, data[:Page], b)
	})

	t.Run("syncfs makes nothing durable on FUSE", func(t *testing.T) {
		f, dir := mounted(t)
		name := filepath.Join(dir, "a")
		create(t, name, nil, true)
		syncDir(t, dir)
		before := f.Ops()
		fd, err := os.OpenFile(name, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = fd.Write(data)
		require.NoError(t, err)
		require.NoError(t, unix.Syncfs(int(fd.Fd())))
		after := f.Ops()
		require.Equal(t, before.Fsyncs+before.Datasyncs+before.Dirsyncs, after.Fsyncs+after.Datasyncs+after.Dirsyncs,
			"the server received a sync for syncfs")
		require.NoError(t, fd.Close())
		reboot(t, f, dir, false, rng)
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Empty(t, b)
	})

	t.Run("a create whose directory was not synced vanishes", func(t *testing.T) {
		f, dir := mounted(t)
		require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
		syncDir(t, dir)
		name := filepath.Join(dir, "d", "a")
		create(t, name, data, true) // the file synced, its directory not
		reboot(t, f, dir, false, rng)
		require.False(t, exists(name), "an unsynced create survived")
		require.True(t, exists(filepath.Join(dir, "d")))
	})

	t.Run("a mkdir whose parent was not synced vanishes", func(t *testing.T) {
		f, dir := mounted(t)
		require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
		create(t, filepath.Join(dir, "d", "a"), data, true)
		syncDir(t, filepath.Join(dir, "d"))
		reboot(t, f, dir, false, rng)
		require.False(t, exists(filepath.Join(dir, "d")))
	})

	t.Run("a rename without a sync of its directory comes undone", func(t *testing.T) {
		f, dir := mounted(t)
		from, to := filepath.Join(dir, "tmp"), filepath.Join(dir, "a")
		create(t, from, data, true)
		syncDir(t, dir)
		require.NoError(t, os.Rename(from, to))
		fd, err := os.Open(to)
		require.NoError(t, err)
		require.NoError(t, fd.Sync()) // the file's own sync does not carry its name
		require.NoError(t, fd.Close())
		reboot(t, f, dir, false, rng)
		require.False(t, exists(to), "an unsynced rename survived")
		b, err := os.ReadFile(from)
		require.NoError(t, err)
		require.Equal(t, data, b)

		require.NoError(t, os.Rename(from, to))
		syncDir(t, dir)
		reboot(t, f, dir, false, rng)
		require.False(t, exists(from))
		b, err = os.ReadFile(to)
		require.NoError(t, err)
		require.Equal(t, data, b)
	})

	t.Run("a rename between directories is durable in each when each is synced", func(t *testing.T) {
		f, dir := mounted(t)
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		require.NoError(t, os.Mkdir(a, 0o755))
		require.NoError(t, os.Mkdir(b, 0o755))
		syncDir(t, dir)
		create(t, filepath.Join(a, "x"), data, true)
		syncDir(t, a)
		require.NoError(t, os.Rename(filepath.Join(a, "x"), filepath.Join(b, "x")))
		syncDir(t, b) // the new name durable, the old one's removal not
		reboot(t, f, dir, false, rng)
		require.True(t, exists(filepath.Join(a, "x")))
		require.True(t, exists(filepath.Join(b, "x")))
	})

	t.Run("an unlink or a link without a sync of the directory comes undone", func(t *testing.T) {
		f, dir := mounted(t)
		name, link := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		create(t, name, data, true)
		syncDir(t, dir)
		require.NoError(t, os.Link(name, link))
		require.NoError(t, os.Remove(name))
		reboot(t, f, dir, false, rng)
		require.True(t, exists(name))
		require.False(t, exists(link))
		require.NoError(t, os.Link(name, link))
		require.NoError(t, os.Remove(name))
		syncDir(t, dir)
		reboot(t, f, dir, false, rng)
		require.False(t, exists(name))
		b, err := os.ReadFile(link)
		require.NoError(t, err)
		require.Equal(t, data, b)
	})

	t.Run("fallocate and truncate are durable only after a sync", func(t *testing.T) {
		f, dir := mounted(t)
		name := filepath.Join(dir, "a")
		create(t, name, data[:Page], true)
		syncDir(t, dir)
		fd, err := os.OpenFile(name, os.O_RDWR, 0)
		require.NoError(t, err)
		require.NoError(t, unix.Fallocate(int(fd.Fd()), 0, 0, 1<<20))
		require.NoError(t, fd.Close())
		reboot(t, f, dir, false, rng)
		st, err := os.Stat(name)
		require.NoError(t, err)
		require.EqualValues(t, Page, st.Size())
		require.NoError(t, os.Truncate(name, 10))
		reboot(t, f, dir, false, rng)
		st, err = os.Stat(name)
		require.NoError(t, err)
		require.EqualValues(t, Page, st.Size())
		require.NotZero(t, f.Ops().Allocates)
		require.NotZero(t, f.Ops().Truncates)
	})

	t.Run("O_DIRECT writes reach the filesystem and sync as others", func(t *testing.T) {
		f, dir := mounted(t)
		name := filepath.Join(dir, "a")
		create(t, name, nil, true)
		syncDir(t, dir)
		fd, err := unix.Open(name, unix.O_WRONLY|unix.O_DIRECT, 0)
		require.NoError(t, err, "O_DIRECT on FUSE")
		n, err := unix.Pwrite(fd, data, 0) // unaligned: FUSE takes it
		require.NoError(t, err)
		require.Equal(t, len(data), n)
		require.NoError(t, unix.Fsync(fd))
		require.NoError(t, unix.Close(fd))
		reboot(t, f, dir, false, rng)
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, data, b)
	})

	t.Run("nothing reaching the filesystem after the cut is applied", func(t *testing.T) {
		f, dir := mounted(t)
		name := filepath.Join(dir, "a")
		create(t, name, data[:Page], true)
		syncDir(t, dir)
		fd, err := os.OpenFile(name, os.O_WRONLY, 0)
		require.NoError(t, err)
		f.Cut(false, rng)
		_, err = fd.WriteAt(data, 0)
		require.ErrorIs(t, err, unix.EIO)
		require.ErrorIs(t, fd.Sync(), unix.EIO)
		fd.Close()
		require.NoError(t, f.Unmount())
		require.NoError(t, f.Mount(dir))
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, data[:Page], b)
	})

	t.Run("a cut with tearing keeps some unsynced pages, and the checksum sees it", func(t *testing.T) {
		f, dir := mounted(t)
		name := filepath.Join(dir, "a")
		create(t, name, nil, true)
		syncDir(t, dir)
		var torn, whole, none int
		for i := 0; i < 20; i++ {
			fd, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
			require.NoError(t, err)
			_, err = fd.Write(record(1, uint64(i), 4*Page))
			require.NoError(t, err)
			require.NoError(t, fd.Close())
			reboot(t, f, dir, true, rng)
			b, err := os.ReadFile(name)
			require.NoError(t, err)
			recs, bad := scanLog(b)
			switch {
			case bad:
				torn++
			case len(recs) == 1:
				whole++
			default:
				none++
			}
			// The next round starts from an empty durable file.
			require.NoError(t, os.Truncate(name, 0))
			fd, err = os.OpenFile(name, os.O_WRONLY, 0)
			require.NoError(t, err)
			require.NoError(t, fd.Sync())
			require.NoError(t, fd.Close())
		}
		t.Logf("20 torn cuts of an unsynced 4-page record: %d torn (detected), %d whole, %d absent", torn, whole, none)
		require.NotZero(t, torn)
		require.NotZero(t, none)
	})
}
