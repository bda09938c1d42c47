//go:build linux

package dio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// devID formats dev as sysfs names it, "MAJ:MIN".
func devID(dev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
}

// sysfsAlignment is the alignment of files on device dev (an st_dev, or the
// st_rdev of a block device) according to sysfs mounted at root: its logical
// block size for memory and offsets, its physical block size when plausible.
func sysfsAlignment(root string, dev uint64) (Alignment, error) {
	l, p, err := sysfsBlockSizes(root, dev)
	if err != nil {
		return Alignment{}, err
	}
	// Memory alignment: since Linux 6.0 the device's DMA alignment would
	// do, but kernels that need this fallback (no STATX_DIOALIGN, so
	// before 6.1) may insist on the logical block size.
	return Alignment{Memory: l, Offset: l, Physical: p, Source: SourceSysfs}, nil
}

// sysfsBlockSizes reads the logical and physical block sizes of device dev
// from root/dev/block/MAJ:MIN/queue. A partition has no queue directory of
// its own; its disk's is one level up, which the kernel resolves for
// "MAJ:MIN/../queue" after following the MAJ:MIN symbolic link (so the path
// must not be cleaned lexically). physical is 0 when unknown or implausible.
func sysfsBlockSizes(root string, dev uint64) (logical, physical int, err error) {
	base := root + "/dev/block/" + devID(dev)
	for _, q := range []string{base + "/queue/", base + "/../queue/"} {
		logical, err = readSysfsInt(q + "logical_block_size")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		if !valid(logical) {
			return 0, 0, fmt.Errorf("%slogical_block_size: implausible value %d", q, logical)
		}
		if p, err := readSysfsInt(q + "physical_block_size"); err == nil && valid(p) && p >= logical {
			physical = p
		}
		return logical, physical, nil
	}
	return 0, 0, fmt.Errorf("no block queue in sysfs for device %s: %w", devID(dev), err)
}

func readSysfsInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}
