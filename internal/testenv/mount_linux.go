//go:build linux

package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Filesystem is a kind of filesystem a test can mount for itself (Mount).
type Filesystem string

const (
	Ext4    Filesystem = "ext4"    // on a loop device
	XFS     Filesystem = "xfs"     // on a loop device
	Btrfs   Filesystem = "btrfs"   // on a loop device
	Tmpfs   Filesystem = "tmpfs"   // a new tmpfs mount
	Overlay Filesystem = "overlay" // overlayfs, its lower and upper layers on an ext4 loop device
	FUSE    Filesystem = "fuse"    // bindfs (FUSE) over a directory of the test's temporary one
)

// Filesystems are every Filesystem Mount knows.
var Filesystems = []Filesystem{Ext4, XFS, Btrfs, Tmpfs, Overlay, FUSE}

// loopSize is the size of a loop device's backing file (sparse): above
// mkfs.xfs's minimum of 300 MiB.
const loopSize = 512 << 20

// mkfs is the command that makes each loop device's filesystem, with its
// Debian package.
var mkfs = map[Filesystem]struct{ cmd, pkg string }{
	Ext4:    {"mkfs.ext4", "e2fsprogs"},
	Overlay: {"mkfs.ext4", "e2fsprogs"},
	XFS:     {"mkfs.xfs", "xfsprogs"},
	Btrfs:   {"mkfs.btrfs", "btrfs-progs"},
}

// Mount mounts a new, empty filesystem of kind fsys for the test and
// returns a directory on it, writable by the test; the mount, its loop
// device and its backing file are removed at cleanup. It needs root, the
// kernel's support for fsys and the commands that make it (losetup,
// mkfs.*, bindfs and /dev/fuse); without them the test ends as
// Unavailable(string(fsys)) says, naming what is missing.
func Mount(tb testing.TB, fsys Filesystem) string {
	tb.Helper()
	if err := mountable(fsys); err != nil {
		Unavailable(tb, string(fsys), err)
	}
	tmp := tb.TempDir() // removed after the unmounts below (cleanups run last-in, first-out)
	var dir string
	var err error
	switch fsys {
	case Ext4, XFS, Btrfs:
		dir, err = mountLoop(tb, tmp, fsys)
	case Tmpfs:
		dir = filepath.Join(tmp, "mnt")
		err = mountAt(tb, dir, "mount", "-t", "tmpfs", "-o", "size=512m", "diskio-test", dir)
	case Overlay:
		var base string
		if base, err = mountLoop(tb, tmp, Overlay); err != nil {
			break
		}
		for _, d := range []string{"lower", "upper", "work"} {
			if err = os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
				break
			}
		}
		if err == nil {
			dir = filepath.Join(tmp, "merged")
			opts := fmt.Sprintf("lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work", base, base, base)
			err = mountAt(tb, dir, "mount", "-t", "overlay", "-o", opts, "diskio-test", dir)
		}
	case FUSE:
		src := filepath.Join(tmp, "src")
		if err = os.Mkdir(src, 0o755); err == nil {
			dir = filepath.Join(tmp, "mnt")
			err = mountAt(tb, dir, "bindfs", src, dir)
		}
	default:
		err = fmt.Errorf("unknown filesystem %q", fsys)
	}
	if err != nil {
		Unavailable(tb, string(fsys), err)
	}
	return dir
}

// BindfsSource is the directory that dir, a FUSE mount from Mount, shows:
// where bindfs, its daemon, reads and writes its files.
func BindfsSource(dir string) string { return filepath.Join(filepath.Dir(dir), "src") }

// mountable says what Mount lacks to mount fsys, or nil.
func mountable(fsys Filesystem) error {
	if os.Geteuid() != 0 {
		return errors.New("needs root (mount, losetup)")
	}
	kernel := string(fsys)
	var cmds []string
	switch fsys {
	case Ext4, XFS, Btrfs, Overlay:
		cmds = []string{"losetup", mkfs[fsys].cmd}
	case FUSE:
		cmds = []string{"bindfs", "fusermount3"}
		if _, err := os.Stat("/dev/fuse"); err != nil {
			return fmt.Errorf("no /dev/fuse: %v", err)
		}
	}
	for _, c := range cmds {
		if _, err := exec.LookPath(c); err != nil {
			return fmt.Errorf("%s not found (apt-get install -y %s)", c, packageOf(fsys, c))
		}
	}
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == kernel {
			return nil
		}
	}
	return fmt.Errorf("the kernel has no %s (not in /proc/filesystems)", kernel)
}

// packageOf is the Debian package of command c, needed for fsys.
func packageOf(fsys Filesystem, c string) string {
	switch c {
	case "losetup":
		return "util-linux"
	case "bindfs", "fusermount3":
		return "bindfs fuse3"
	}
	return mkfs[fsys].pkg
}

// mountLoop makes a loop device over a sparse file in tmp, makes a fsys
// filesystem on it (ext4 for Overlay) and mounts it; all undone at
// cleanup.
func mountLoop(tb testing.TB, tmp string, fsys Filesystem) (string, error) {
	img := filepath.Join(tmp, "disk.img")
	f, err := os.Create(img)
	if err != nil {
		return "", err
	}
	err = f.Truncate(loopSize)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	// Direct I/O to the backing file keeps its pages out of the page
	// cache twice; a backing filesystem without O_DIRECT takes the
	// device without it.
	out, err := run("losetup", "--find", "--show", "--direct-io=on", img)
	if err != nil {
		out, err = run("losetup", "--find", "--show", img)
	}
	if err != nil {
		return "", err
	}
	dev := strings.TrimSpace(out)
	tb.Cleanup(func() {
		if _, err := run("losetup", "-d", dev); err != nil {
			tb.Errorf("testenv: %v", err)
		}
	})
	force := "-f"
	if mkfs[fsys].cmd == "mkfs.ext4" {
		force = "-F"
	}
	if _, err := run(mkfs[fsys].cmd, "-q", force, dev); err != nil {
		return "", err
	}
	dir := filepath.Join(tmp, "mnt")
	return dir, mountAt(tb, dir, "mount", dev, dir)
}

// mountAt makes the directory dir and runs the command that mounts there;
// cleanup unmounts it.
func mountAt(tb testing.TB, dir string, cmd ...string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if _, err := run(cmd[0], cmd[1:]...); err != nil {
		return err
	}
	tb.Cleanup(func() {
		if _, err := run("umount", dir); err != nil {
			tb.Errorf("testenv: %v", err)
		}
	})
	return nil
}

// run runs a command and returns its standard output; its error names
// the command and carries what it printed on standard error.
func run(name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	c := exec.Command(name, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.String(), nil
}
