//go:build linux

package sched

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestUnlinkat(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			for _, inline := range []bool{true, false} {
				s := newSched(t, b, Options{NoInline: !inline})
				dir := t.TempDir()
				name := filepath.Join(dir, "f")
				require.NoError(t, os.WriteFile(name, make([]byte, 1<<20), 0o644))
				require.NoError(t, s.Unlinkat(unix.AT_FDCWD, name, 0))
				_, err := os.Stat(name)
				require.ErrorIs(t, err, os.ErrNotExist)
				require.Equal(t, unix.ENOENT, s.Unlinkat(unix.AT_FDCWD, name, 0))

				// Relative to a directory descriptor; a directory.
				require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
				d, err := os.Open(dir)
				require.NoError(t, err)
				defer d.Close()
				require.NoError(t, os.WriteFile(filepath.Join(dir, "d", "g"), []byte("x"), 0o644))
				require.Equal(t, unix.EISDIR, s.Unlinkat(int(d.Fd()), "d", 0))
				require.Equal(t, unix.ENOTEMPTY, s.Unlinkat(int(d.Fd()), "d", unix.AT_REMOVEDIR))
				require.NoError(t, s.Unlinkat(int(d.Fd()), "d/g", 0))
				require.NoError(t, s.Unlinkat(int(d.Fd()), "d", unix.AT_REMOVEDIR))
				require.Equal(t, unix.EINVAL, s.Unlinkat(unix.AT_FDCWD, "a\x00b", 0))
				require.Equal(t, b == URing, s.ringUnlink, "the ring's IORING_OP_UNLINKAT (Linux 5.11; this kernel has it)")
			}
		})
	}
}
