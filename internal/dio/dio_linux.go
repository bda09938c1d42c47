//go:build linux

package dio

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/internal/sys"
)

// sysfsRoot is where sysfs is mounted.
const sysfsRoot = "/sys"

// errNoDIOAlign is the reason given when statx reports direct I/O alignment
// support with both alignments zero: the kernel's way of saying that this
// file cannot be used with O_DIRECT.
var errNoDIOAlign = errors.New("statx reports stx_dio_mem_align = stx_dio_offset_align = 0: the kernel does not allow direct I/O on this file")

// statInfo is what alignment discovery needs from statx (or fstat).
type statInfo struct {
	mode      uint32 // file type bits as in st_mode
	dev, rdev uint64 // device holding the file; device a block special file is
	dio       bool   // STATX_DIOALIGN was answered
	memAlign  uint32 // stx_dio_mem_align
	offAlign  uint32 // stx_dio_offset_align
}

func (s *statInfo) isBlockDevice() bool { return s.mode&unix.S_IFMT == unix.S_IFBLK }

// statxInfo runs statx(dirfd, path, flags) and, where statx itself is not
// available (ENOSYS on old kernels, EPERM under old seccomp profiles), falls
// back to fstatat.
func statxInfo(dirfd int, path string, flags int) (statInfo, error) {
	var stx unix.Statx_t
	err := sys.Statx(dirfd, path, flags, unix.STATX_TYPE|unix.STATX_DIOALIGN, &stx)
	if err == nil {
		return statInfo{
			mode:     uint32(stx.Mode),
			dev:      unix.Mkdev(stx.Dev_major, stx.Dev_minor),
			rdev:     unix.Mkdev(stx.Rdev_major, stx.Rdev_minor),
			dio:      stx.Mask&unix.STATX_DIOALIGN != 0,
			memAlign: stx.Dio_mem_align,
			offAlign: stx.Dio_offset_align,
		}, nil
	}
	if err != unix.ENOSYS && err != unix.EPERM {
		return statInfo{}, err
	}
	var st unix.Stat_t
	if err := sys.Fstatat(dirfd, path, &st, flags); err != nil {
		return statInfo{}, err
	}
	return statInfo{mode: st.Mode, dev: uint64(st.Dev), rdev: uint64(st.Rdev)}, nil
}

// ForFD returns the direct I/O alignment of the open file fd. It tries, in
// order: statx(STATX_DIOALIGN); for a block device, ioctl BLKSSZGET; for a
// regular file, the logical block size of the device holding it, from sysfs
// or from BLKSSZGET on its device node; else [Default].
//
// When the kernel reports that the file does not support direct I/O at all
// (statx answers STATX_DIOALIGN with both alignments 0), ForFD returns an
// error matching [ErrUnsupported]. Other errors come from statx on fd.
func ForFD(fd int) (Alignment, error) {
	return forFD(fd, func() string { return fdName(fd) })
}

// ForFile is [ForFD] for an *os.File. It does not change the file's
// blocking mode (it does not call f.Fd).
func ForFile(f *os.File) (Alignment, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return Alignment{}, fmt.Errorf("dio: alignment of %s: %w", f.Name(), err)
	}
	var a Alignment
	var aerr error
	if err := rc.Control(func(fd uintptr) {
		a, aerr = forFD(int(fd), f.Name)
	}); err != nil {
		return Alignment{}, fmt.Errorf("dio: alignment of %s: %w", f.Name(), err)
	}
	return a, aerr
}

// ForPath returns the direct I/O alignment of the file at path (following
// symbolic links), as [ForFD] would for it open. It does not open regular
// files; a block device is opened read-only only if sysfs cannot answer.
func ForPath(path string) (Alignment, error) {
	st, err := statxInfo(unix.AT_FDCWD, path, 0)
	if err != nil {
		return Alignment{}, fmt.Errorf("dio: alignment of %s: %w", path, &os.PathError{Op: "statx", Path: path, Err: err})
	}
	if st.dio {
		return fromStatx(&st, -1, func() string { return path })
	}
	if st.isBlockDevice() {
		if a, err := sysfsAlignment(sysfsRoot, st.rdev); err == nil {
			return a, nil
		}
		if fd, err := sys.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0); err == nil {
			defer sys.Close(fd)
			if a, err := blkAlignment(fd); err == nil {
				return a, nil
			}
		}
		return Default(), nil
	}
	return regularFallback(&st), nil
}

func forFD(fd int, name func() string) (Alignment, error) {
	st, err := statxInfo(fd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return Alignment{}, fmt.Errorf("dio: alignment of %s: statx: %w", name(), err)
	}
	if st.dio {
		return fromStatx(&st, fd, name)
	}
	if st.isBlockDevice() {
		if a, err := blkAlignment(fd); err == nil {
			return a, nil
		}
		if a, err := sysfsAlignment(sysfsRoot, st.rdev); err == nil {
			return a, nil
		}
		return Default(), nil
	}
	return regularFallback(&st), nil
}

// fromStatx builds the alignment from an answered STATX_DIOALIGN, adding the
// physical block size from the device when it can be had cheaply. fd is -1
// when there is no open descriptor.
func fromStatx(st *statInfo, fd int, name func() string) (Alignment, error) {
	m, o := int(st.memAlign), int(st.offAlign)
	if m == 0 && o == 0 {
		n := name()
		return Alignment{}, &UnsupportedError{Path: n, FSType: fsTypeOf(n), Err: errNoDIOAlign}
	}
	// The kernel fills both or neither; should one be missing, the other
	// is the best guess for it.
	if m == 0 {
		m = o
	}
	if o == 0 {
		o = m
	}
	a := Alignment{Memory: m, Offset: o, Source: SourceStatx}
	dev := st.dev
	if st.isBlockDevice() {
		dev = st.rdev
		if fd >= 0 {
			if p, err := sys.IoctlGetInt(fd, unix.BLKPBSZGET); err == nil && valid(p) && p >= o {
				a.Physical = p
				return a, nil
			}
		}
	}
	if _, p, err := sysfsBlockSizes(sysfsRoot, dev); err == nil && p >= o {
		a.Physical = p
	}
	return a, nil
}

// regularFallback finds the alignment of a regular file without statx's
// help: sysfs for the device holding it, else BLKSSZGET on that device's
// node, else the default.
func regularFallback(st *statInfo) Alignment {
	if a, err := sysfsAlignment(sysfsRoot, st.dev); err == nil {
		return a
	}
	if a, err := devNodeAlignment(sysfsRoot, st.dev); err == nil {
		return a
	}
	return Default()
}

// blkAlignment asks the block device open as fd for its logical (and
// physical) block size.
func blkAlignment(fd int) (Alignment, error) {
	l, err := sys.IoctlGetInt(fd, unix.BLKSSZGET)
	if err != nil {
		return Alignment{}, fmt.Errorf("ioctl BLKSSZGET: %w", err)
	}
	if !valid(l) {
		return Alignment{}, fmt.Errorf("ioctl BLKSSZGET: implausible logical block size %d", l)
	}
	a := Alignment{Memory: l, Offset: l, Source: SourceBlkSSZGet}
	if p, err := sys.IoctlGetInt(fd, unix.BLKPBSZGET); err == nil && valid(p) && p >= l {
		a.Physical = p
	}
	return a, nil
}

// devNodeAlignment opens the device node of dev read-only and asks it with
// BLKSSZGET. This usually needs root (and, in containers, access to the
// device), which is why sysfs is tried first.
func devNodeAlignment(root string, dev uint64) (Alignment, error) {
	if unix.Major(dev) == 0 {
		// Anonymous devices (btrfs subvolumes, overlayfs, tmpfs, NFS)
		// have no node and no block size.
		return Alignment{}, fmt.Errorf("device %d:%d is not a block device", unix.Major(dev), unix.Minor(dev))
	}
	for _, node := range devNodes(root, dev) {
		fd, err := sys.Open(node, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if sys.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK && uint64(st.Rdev) == dev {
			a, err := blkAlignment(fd)
			sys.Close(fd)
			if err == nil {
				return a, nil
			}
			continue
		}
		sys.Close(fd)
	}
	return Alignment{}, fmt.Errorf("no accessible device node for %d:%d", unix.Major(dev), unix.Minor(dev))
}

// devNodes lists candidate device node paths for dev: udev's
// /dev/block/MAJ:MIN link and /dev/DEVNAME from sysfs's uevent.
func devNodes(root string, dev uint64) []string {
	id := devID(dev)
	nodes := []string{"/dev/block/" + id}
	if b, err := os.ReadFile(root + "/dev/block/" + id + "/uevent"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "DEVNAME="); ok && name != "" {
				nodes = append(nodes, "/dev/"+name)
			}
		}
	}
	return nodes
}

// fdName names fd for messages: its path from /proc, else "fd N".
func fdName(fd int) string {
	if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil {
		return p
	}
	return "fd " + strconv.Itoa(fd)
}

// FSType names the filesystem holding path, from the magic number statfs(2)
// reports: "ext4/ext2/ext3", "xfs", "tmpfs", ... (see [FSTypeName]).
func FSType(path string) (string, error) {
	var sfs unix.Statfs_t
	if err := sys.Statfs(path, &sfs); err != nil {
		return "", &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	// f_type is 32 bits wide in the kernel; Statfs_t.Type is signed on
	// some architectures, where magic numbers above 2^31 come out negative.
	return FSTypeName(uint32(sfs.Type)), nil
}

// fsTypeOf is FSType for messages: path, else its directory, else "".
func fsTypeOf(path string) string {
	if n, err := FSType(path); err == nil {
		return n
	}
	if n, err := FSType(filepath.Dir(path)); err == nil {
		return n
	}
	return ""
}

// OpenDirect opens path like os.OpenFile with O_DIRECT added to flag. When
// the filesystem refuses O_DIRECT (open fails with EINVAL), the error is an
// *[UnsupportedError] naming the path and filesystem type; it matches
// [ErrUnsupported] and still syscall.EINVAL.
func OpenDirect(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_DIRECT, perm)
	if err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return nil, &UnsupportedError{Path: path, FSType: fsTypeOf(path), Err: err}
		}
		return nil, err
	}
	return f, nil
}

// Probe reports whether direct I/O works in directory dir: it creates a
// temporary file there with O_DIRECT, writes one aligned block, reads it back
// and checks it, and removes the file. The file is unlinked as soon as it is
// created, so nothing is left behind even if the process dies.
//
// If the filesystem refuses O_DIRECT, the error is an *[UnsupportedError]
// that matches [ErrUnsupported], names dir and the filesystem type, and wraps
// the underlying error (errors.Is(err, syscall.EINVAL) for the usual refusal
// by open(2)). Other failures (dir missing, permission denied) are returned
// wrapped as they are and do not match ErrUnsupported.
//
// Note that whether a filesystem accepts O_DIRECT depends on the kernel:
// tmpfs refuses it before Linux 6.6 and accepts it (without any alignment
// requirement, still through the page cache) since.
func Probe(dir string) error {
	_, err := ProbeAlignment(dir)
	return err
}

// ProbeAlignment is [Probe] that also returns the alignment discovered for
// the probe file, which holds for files created in dir.
func ProbeAlignment(dir string) (Alignment, error) {
	fsType, err := FSType(dir)
	if err != nil {
		return Alignment{}, fmt.Errorf("dio: probing O_DIRECT at %s: %w", dir, err)
	}
	name, fd, err := createProbeFile(dir)
	if err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return Alignment{}, &UnsupportedError{Path: dir, FSType: fsType, Err: err}
		}
		return Alignment{}, fmt.Errorf("dio: probing O_DIRECT at %s (%s): %w", dir, fsType, err)
	}
	defer sys.Close(fd)
	// The descriptor keeps the file alive; the name is not needed.
	unlinkErr := sys.Unlink(name)

	a, err := forFD(fd, func() string { return name })
	if err != nil {
		var ue *UnsupportedError
		if errors.As(err, &ue) {
			return Alignment{}, &UnsupportedError{Path: dir, FSType: fsType, Err: ue.Err}
		}
		return Alignment{}, fmt.Errorf("dio: probing O_DIRECT at %s (%s): %w", dir, fsType, err)
	}
	if err := writeReadBlock(fd, a); err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return Alignment{}, &UnsupportedError{Path: dir, FSType: fsType, Err: err}
		}
		return Alignment{}, fmt.Errorf("dio: probing O_DIRECT at %s (%s): %w", dir, fsType, err)
	}
	if unlinkErr != nil {
		return Alignment{}, fmt.Errorf("dio: probing O_DIRECT at %s (%s): %w", dir, fsType, &os.PathError{Op: "unlink", Path: name, Err: unlinkErr})
	}
	return a, nil
}

// createProbeFile creates a new file in dir opened with O_DIRECT.
func createProbeFile(dir string) (string, int, error) {
	var err error
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".dio-probe-%d-%d", os.Getpid(), rand.Uint32()))
		var fd int
		fd, err = sys.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
		switch err {
		case nil:
			return name, fd, nil
		case unix.EEXIST:
			continue
		}
		return "", -1, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return "", -1, &os.PathError{Op: "open", Path: filepath.Join(dir, ".dio-probe-*"), Err: err}
}

// writeReadBlock writes one aligned block at offset 0 of fd and reads it
// back. An EINVAL comes back explained by ExplainEINVAL.
func writeReadBlock(fd int, a Alignment) error {
	n := a.off()
	wbuf, wraw, err := alignedBuf(n, a.mem())
	if err != nil {
		return err
	}
	defer mem.Unmap(wraw)
	rbuf, rraw, err := alignedBuf(n, a.mem())
	if err != nil {
		return err
	}
	defer mem.Unmap(rraw)
	for i := range wbuf {
		wbuf[i] = byte(i*7 + 1)
	}
	got, err := sys.Pwrite(fd, wbuf, 0)
	if err := checkBlock("pwrite", got, err, n, wbuf, a); err != nil {
		return err
	}
	got, err = sys.Pread(fd, rbuf, 0)
	if err := checkBlock("pread", got, err, n, rbuf, a); err != nil {
		return err
	}
	for i := range rbuf {
		if rbuf[i] != wbuf[i] {
			return fmt.Errorf("O_DIRECT block read back differs from the block written (byte %d: %#x, want %#x)", i, rbuf[i], wbuf[i])
		}
	}
	return nil
}

// checkBlock is the error of writeReadBlock's op, which transferred got
// of n bytes of buf, or failed with err.
func checkBlock(op string, got int, err error, n int, buf []byte, a Alignment) error {
	if err == unix.EINVAL {
		return ExplainEINVAL(op, 0, n, uintptr(unsafe.Pointer(&buf[0])), a)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if got != n {
		return fmt.Errorf("%s of %d bytes with O_DIRECT transferred %d", op, n, got)
	}
	return nil
}

// alignedBuf returns n bytes of mapped memory aligned to align, and the
// mapping to give back to mem.Unmap.
func alignedBuf(n, align int) (buf, raw []byte, err error) {
	if align <= mem.PageSize {
		raw, err = mem.Map(n)
		return raw, raw, err
	}
	raw, err = mem.Map(n + align)
	if err != nil {
		return nil, nil, err
	}
	p := uintptr(unsafe.Pointer(&raw[0]))
	skip := int((uintptr(align) - p%uintptr(align)) % uintptr(align))
	return raw[skip : skip+n], raw, nil
}
