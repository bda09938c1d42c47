package dio

import "fmt"

// Filesystem magic numbers as statfs(2) reports them in f_type (Linux).
const (
	MagicExt4     = 0xEF53 // ext2, ext3 and ext4 share it
	MagicXFS      = 0x58465342
	MagicBtrfs    = 0x9123683E
	MagicTmpfs    = 0x01021994
	MagicRamfs    = 0x858458F6
	MagicOverlay  = 0x794C7630
	MagicNFS      = 0x6969
	MagicZFS      = 0x2FC12FC1
	MagicF2FS     = 0xF2F52010
	MagicFUSE     = 0x65735546
	MagicBcachefs = 0xCA451A4E
)

var fsNames = map[uint32]string{
	MagicExt4:     "ext4/ext2/ext3",
	MagicXFS:      "xfs",
	MagicBtrfs:    "btrfs",
	MagicTmpfs:    "tmpfs",
	MagicRamfs:    "ramfs",
	MagicOverlay:  "overlayfs",
	MagicNFS:      "nfs",
	MagicZFS:      "zfs",
	MagicF2FS:     "f2fs",
	MagicFUSE:     "fuse",
	MagicBcachefs: "bcachefs",
}

// FSTypeName names the filesystem with statfs(2) magic number magic, e.g.
// "tmpfs" for 0x01021994; unknown numbers are shown in hex
// ("filesystem magic 0x12345678").
func FSTypeName(magic uint32) string {
	if n, ok := fsNames[magic]; ok {
		return n
	}
	return fmt.Sprintf("filesystem magic %#x", magic)
}
