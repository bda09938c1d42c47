//go:build linux

package dio

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/internal/testenv"
)

// rawStatx is what the kernel says about path, for comparison.
func rawStatx(t *testing.T, path string) unix.Statx_t {
	t.Helper()
	var st unix.Statx_t
	require.NoError(t, unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_DIOALIGN|unix.STATX_TYPE, &st))
	return st
}

func tempFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func requirePlausible(t *testing.T, a Alignment) {
	t.Helper()
	require.True(t, valid(a.Offset) && a.Offset >= 512 && a.Offset <= 4096, "offset alignment %d", a.Offset)
	require.True(t, valid(a.Memory) && a.Memory <= 4096, "memory alignment %d", a.Memory)
	require.True(t, a.Physical == 0 || (valid(a.Physical) && a.Physical >= a.Offset), "physical block size %d", a.Physical)
}

func TestAlignmentOfTempFile(t *testing.T) {
	f := tempFile(t)
	a, err := ForFile(f)
	require.NoError(t, err)
	fsType, err := FSType(f.Name())
	require.NoError(t, err)
	t.Logf("%s on %s: %v", f.Name(), fsType, a)
	requirePlausible(t, a)

	st := rawStatx(t, f.Name())
	if st.Mask&unix.STATX_DIOALIGN != 0 {
		require.Equal(t, SourceStatx, a.Source)
		require.Equal(t, int(st.Dio_offset_align), a.Offset)
		require.Equal(t, int(st.Dio_mem_align), a.Memory)
	} else {
		t.Logf("%s (%s) does not answer STATX_DIOALIGN", f.Name(), fsType)
		require.Contains(t, []string{SourceSysfs, SourceBlkSSZGet, SourceDefault}, a.Source)
	}

	// The three entry points agree.
	rc, err := f.SyscallConn()
	require.NoError(t, err)
	require.NoError(t, rc.Control(func(fd uintptr) {
		b, err := ForFD(int(fd))
		require.NoError(t, err)
		require.Equal(t, a, b)
	}))
	c, err := ForPath(f.Name())
	require.NoError(t, err)
	require.Equal(t, a, c)
}

func TestForFDBadDescriptor(t *testing.T) {
	_, err := ForFD(-1)
	require.ErrorIs(t, err, syscall.EBADF)
	_, err = ForPath(filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestStatxZeroMeansUnsupported(t *testing.T) {
	dir := t.TempDir()
	_, err := fromStatx(&statInfo{mode: unix.S_IFREG, dio: true}, -1, func() string { return dir })
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, "O_DIRECT is not supported by the filesystem at "+dir)
	require.ErrorContains(t, err, "stx_dio_offset_align = 0")
}

func TestSysfsFallback(t *testing.T) {
	f := tempFile(t)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(int(f.Fd()), &st))
	dev := uint64(st.Dev)
	if unix.Major(dev) == 0 {
		t.Skipf("%s is on anonymous device %s (btrfs, overlayfs, tmpfs...): no block queue in sysfs", f.Name(), devID(dev))
	}
	a, err := sysfsAlignment(sysfsRoot, dev)
	require.NoError(t, err)
	t.Logf("sysfs for %s: %v", devID(dev), a)
	require.Equal(t, SourceSysfs, a.Source)
	requirePlausible(t, a)
	require.Equal(t, a.Offset, a.Memory)

	// statx's offset alignment is the device's logical block size.
	if sx := rawStatx(t, f.Name()); sx.Mask&unix.STATX_DIOALIGN != 0 {
		require.Equal(t, int(sx.Dio_offset_align), a.Offset)
	}
	// The fallback without statx takes this path too.
	require.Equal(t, a, regularFallback(&statInfo{mode: unix.S_IFREG, dev: dev}))
}

func TestSysfsPartitionAndMissing(t *testing.T) {
	// A fake sysfs: 8:0 is a disk with its queue, 8:1 a partition of it
	// without one.
	root := t.TempDir()
	disk := filepath.Join(root, "devices", "sda")
	require.NoError(t, os.MkdirAll(filepath.Join(disk, "queue"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(disk, "sda1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(disk, "queue", "logical_block_size"), []byte("512\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(disk, "queue", "physical_block_size"), []byte("4096\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dev", "block"), 0o755))
	require.NoError(t, os.Symlink("../../devices/sda", filepath.Join(root, "dev", "block", "8:0")))
	require.NoError(t, os.Symlink("../../devices/sda/sda1", filepath.Join(root, "dev", "block", "8:1")))

	want := Alignment{Memory: 512, Offset: 512, Physical: 4096, Source: SourceSysfs}
	for _, dev := range []uint64{unix.Mkdev(8, 0), unix.Mkdev(8, 1)} {
		a, err := sysfsAlignment(root, dev)
		require.NoError(t, err, devID(dev))
		require.Equal(t, want, a, devID(dev))
	}
	_, err := sysfsAlignment(root, unix.Mkdev(8, 2))
	require.ErrorContains(t, err, "no block queue in sysfs for device 8:2")

	require.NoError(t, os.WriteFile(filepath.Join(disk, "queue", "logical_block_size"), []byte("1000\n"), 0o644))
	_, err = sysfsAlignment(root, unix.Mkdev(8, 0))
	require.ErrorContains(t, err, "implausible value 1000")
}

func TestBlockDeviceByPath(t *testing.T) {
	f := tempFile(t)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(int(f.Fd()), &st))
	dev := uint64(st.Dev)
	want, err := sysfsAlignment(sysfsRoot, dev)
	if err != nil {
		t.Skipf("no sysfs queue for the temp dir's device: %v", err)
	}
	var node string
	for _, n := range devNodes(sysfsRoot, dev) {
		var ns unix.Stat_t
		if unix.Stat(n, &ns) == nil && ns.Mode&unix.S_IFMT == unix.S_IFBLK && uint64(ns.Rdev) == dev {
			node = n
			break
		}
	}
	if node == "" {
		t.Skipf("no device node for %s", devID(dev))
	}
	a, err := ForPath(node)
	require.NoError(t, err)
	t.Logf("%s: %v", node, a)
	require.Equal(t, want.Offset, a.Offset)
	require.Equal(t, want.Physical, a.Physical)
}

func TestProbeTempDir(t *testing.T) {
	dir := t.TempDir()
	a, err := ProbeAlignment(dir)
	if errors.Is(err, ErrUnsupported) {
		testenv.Unavailable(t, "odirect", err)
	}
	require.NoError(t, err)
	t.Logf("O_DIRECT works in %s: %v", dir, a)
	require.NoError(t, Probe(dir))
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "probe left files behind")
}

func TestProbeMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	err := Probe(dir)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NotErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, dir)
}

func TestProbeTmpfs(t *testing.T) {
	const dir = "/dev/shm"
	var sfs unix.Statfs_t
	if err := unix.Statfs(dir, &sfs); err != nil || uint32(sfs.Type) != MagicTmpfs {
		t.Skipf("%s is not tmpfs here (statfs: %v, magic %#x)", dir, err, uint32(sfs.Type))
	}
	err := Probe(dir)
	if err == nil {
		// Since Linux 6.6 tmpfs accepts O_DIRECT (still through the
		// page cache); TestProbeRamfs covers the refusal instead.
		t.Skipf("tmpfs at %s accepts O_DIRECT on this kernel (Linux >= 6.6)", dir)
	}
	t.Log(err)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorIs(t, err, syscall.EINVAL)
	require.ErrorContains(t, err, "O_DIRECT is not supported by the filesystem at /dev/shm (tmpfs): open /dev/shm/")
	require.ErrorContains(t, err, ": invalid argument")
}

// ramfs has never supported O_DIRECT. Mounting one needs root and a private
// mount namespace, so the test runs itself in a child process that has both.
const ramfsHelperEnv = "DIO_TEST_RAMFS_DIR"

func TestProbeRamfs(t *testing.T) {
	if dir := os.Getenv(ramfsHelperEnv); dir != "" {
		ramfsHelper(t, dir)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting ramfs needs root")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestProbeRamfs$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), ramfsHelperEnv+"="+dir,
		// Under -race the child would otherwise sleep 1s at exit.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	// Go makes the new mount namespace private, so the mount never
	// reaches this process's namespace and vanishes with the child.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if (err != nil && bytes.Contains(out, []byte("RAMFS-UNAVAILABLE"))) || errors.Is(err, syscall.EPERM) {
		t.Skipf("cannot mount ramfs here: %v\n%s", err, out)
	}
	require.NoError(t, err, "%s", out)
	t.Logf("%s", out)
	require.Contains(t, string(out), "O_DIRECT is not supported by the filesystem at "+dir+" (ramfs): open "+dir+"/")
}

func ramfsHelper(t *testing.T, dir string) {
	if err := unix.Mount("none", dir, "ramfs", 0, ""); err != nil {
		t.Skipf("RAMFS-UNAVAILABLE: mount ramfs: %v", err)
	}
	defer unix.Unmount(dir, 0)
	err := Probe(dir)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorIs(t, err, syscall.EINVAL)
	t.Log(err)

	f, err := OpenDirect(filepath.Join(dir, "x"), os.O_RDWR|os.O_CREATE, 0o600)
	require.Nil(t, f)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorIs(t, err, syscall.EINVAL)
	require.ErrorContains(t, err, "O_DIRECT is not supported by the filesystem at "+dir+"/x (ramfs): open "+dir+"/x: invalid argument")
}

func TestOpenDirect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d")
	f, err := OpenDirect(path, os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, ErrUnsupported) {
		testenv.Unavailable(t, "odirect", err)
	}
	require.NoError(t, err)
	defer f.Close()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.NotZero(t, fl&unix.O_DIRECT, "file not open with O_DIRECT")

	_, err = OpenDirect(filepath.Join(t.TempDir(), "missing", "d"), os.O_RDONLY, 0)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NotErrorIs(t, err, ErrUnsupported)
}

// TestRealMisalignedPread makes the kernel refuse misaligned O_DIRECT reads
// and checks that ExplainEINVAL names the culprit.
func TestRealMisalignedPread(t *testing.T) {
	f, err := OpenDirect(filepath.Join(t.TempDir(), "d"), os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, ErrUnsupported) {
		testenv.Unavailable(t, "odirect", err)
	}
	require.NoError(t, err)
	defer f.Close()
	a, err := ForFile(f)
	require.NoError(t, err)
	if a.Source == SourceDefault {
		t.Skipf("alignment unknown for %s (%v): the filesystem may not enforce any", f.Name(), a)
	}
	if a.Memory >= mem.PageSize {
		t.Skipf("memory alignment %d: cannot misalign a page-aligned buffer within the page", a.Memory)
	}
	// n is a whole number of blocks and pages: a misaligned buffer that
	// long crosses a page boundary. (Linux 6.18 accepts a misaligned
	// buffer that lies within one page, despite stx_dio_mem_align.)
	n := max(a.Offset, mem.PageSize)
	buf, err := mem.Map(4 * n)
	require.NoError(t, err)
	defer mem.Unmap(buf)
	fd := int(f.Fd())

	// Data first: a read at or past end of file returns 0 before the
	// kernel checks alignment.
	for i := range buf {
		buf[i] = byte(i)
	}
	w, err := unix.Pwrite(fd, buf[:2*n], 0)
	require.NoError(t, err)
	require.Equal(t, 2*n, w)

	addr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
	cases := []struct {
		name string
		off  int64
		b    []byte
		want string
		bad  [3]bool
	}{
		{"offset", 1, buf[2*n : 3*n], "offset 1 is not a multiple of", [3]bool{true, false, false}},
		{"length", 0, buf[2*n : 3*n-1], "is not a multiple of", [3]bool{false, true, false}},
		{"address", 0, buf[2*n+1 : 3*n+1], "is not aligned to", [3]bool{false, false, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := unix.Pread(fd, c.b, c.off)
			require.ErrorIs(t, err, syscall.EINVAL, "kernel accepted a misaligned O_DIRECT read (%v)", a)
			xerr := ExplainEINVAL("pread", c.off, len(c.b), addr(c.b), a)
			t.Log(xerr)
			require.ErrorIs(t, xerr, syscall.EINVAL)
			var e *EINVALError
			require.ErrorAs(t, xerr, &e)
			require.Equal(t, c.bad, [3]bool{e.OffsetMisaligned, e.LengthMisaligned, e.AddrMisaligned})
			require.Contains(t, xerr.Error(), c.want)
		})
	}

	// And the aligned read succeeds, which ExplainEINVAL would call aligned.
	clear(buf[2*n:])
	r, err := unix.Pread(fd, buf[2*n:3*n], int64(n))
	require.NoError(t, err)
	require.Equal(t, n, r)
	require.Equal(t, buf[n:2*n], buf[2*n:3*n])
	require.False(t, ExplainEINVAL("pread", int64(n), n, addr(buf[2*n:]), a).(*EINVALError).Misaligned())
}

func TestAlignmentOnTmpfs(t *testing.T) {
	const dir = "/dev/shm"
	if n, err := FSType(dir); err != nil || n != "tmpfs" {
		t.Skipf("%s is not tmpfs here (%q, %v)", dir, n, err)
	}
	f, err := os.CreateTemp(dir, "dio-test-")
	require.NoError(t, err)
	defer os.Remove(f.Name())
	defer f.Close()
	a, err := ForFile(f)
	require.NoError(t, err)
	t.Logf("%s: %v", f.Name(), a)
	if rawStatx(t, f.Name()).Mask&unix.STATX_DIOALIGN == 0 {
		// No statx answer and no block device under tmpfs.
		require.Equal(t, Default(), a)
	}
}

func TestFSType(t *testing.T) {
	name, err := FSType(t.TempDir())
	require.NoError(t, err)
	require.NotEmpty(t, name)
	t.Log(name)
	if _, err := os.Stat("/dev/shm"); err == nil {
		n, err := FSType("/dev/shm")
		require.NoError(t, err)
		t.Log("/dev/shm:", n)
	}
	_, err = FSType(filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.True(t, strings.HasPrefix(err.Error(), "statfs "))
}
