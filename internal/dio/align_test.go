package dio

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestAlignmentPredicates(t *testing.T) {
	a := Alignment{Memory: 512, Offset: 4096, Source: SourceStatx}
	require.True(t, a.OffsetAligned(0))
	require.True(t, a.OffsetAligned(8192))
	require.False(t, a.OffsetAligned(512))
	require.True(t, a.LengthAligned(0))
	require.True(t, a.LengthAligned(4096))
	require.False(t, a.LengthAligned(4095))
	require.True(t, a.AddrAligned(0x1200))
	require.False(t, a.AddrAligned(0x1201))

	raw := make([]byte, 3*4096)
	p := uintptr(unsafe.Pointer(&raw[0]))
	skip := int((4096 - p%4096) % 4096)
	buf := raw[skip : skip+4096]
	require.True(t, a.BufferAligned(buf))
	require.True(t, a.Aligned(4096, buf))
	require.False(t, a.Aligned(4097, buf), "offset")
	require.False(t, a.Aligned(4096, buf[:100]), "length")
	require.False(t, a.Aligned(4096, raw[skip+1:skip+1+4096]), "address")
	require.True(t, a.Aligned(0, nil), "empty buffer")
}

func TestAlignmentRounding(t *testing.T) {
	a := Alignment{Memory: 512, Offset: 512}
	require.Equal(t, int64(0), a.AlignDown(511))
	require.Equal(t, int64(512), a.AlignDown(512))
	require.Equal(t, int64(512), a.AlignDown(1023))
	require.Equal(t, int64(0), a.AlignUp(0))
	require.Equal(t, int64(512), a.AlignUp(1))
	require.Equal(t, int64(512), a.AlignUp(512))
	require.Equal(t, int64(1024), a.AlignUp(513))
	require.Equal(t, 1024, a.AlignLen(600))
	require.Equal(t, int64(1<<40), a.AlignUp(1<<40-1))

	start, n := a.Span(700, 10)
	require.Equal(t, int64(512), start)
	require.Equal(t, 512, n)
	start, n = a.Span(500, 20) // crosses a block boundary
	require.Equal(t, int64(0), start)
	require.Equal(t, 1024, n)
	start, n = a.Span(1024, 512) // already aligned
	require.Equal(t, int64(1024), start)
	require.Equal(t, 512, n)
	start, n = a.Span(1024, 0)
	require.Equal(t, int64(1024), start)
	require.Equal(t, 0, n)
}

func TestAlignmentZeroValueIsConservative(t *testing.T) {
	var a Alignment
	require.False(t, a.OffsetAligned(512))
	require.True(t, a.OffsetAligned(8192))
	require.False(t, a.AddrAligned(512))
	require.Equal(t, int64(4096), a.AlignUp(1))
	require.Equal(t, 4096, a.WriteUnit())
	require.Equal(t, Alignment{Memory: 4096, Offset: 4096, Source: "default"}, Default())
}

func TestWriteUnit(t *testing.T) {
	require.Equal(t, 4096, Alignment{Memory: 512, Offset: 512, Physical: 4096}.WriteUnit())
	require.Equal(t, 512, Alignment{Memory: 512, Offset: 512}.WriteUnit())
	require.Equal(t, 4096, Alignment{Memory: 512, Offset: 4096, Physical: 512}.WriteUnit())
}

func TestAlignmentString(t *testing.T) {
	require.Equal(t, "offset 512, memory 512, physical 4096 (statx)",
		Alignment{Memory: 512, Offset: 512, Physical: 4096, Source: SourceStatx}.String())
	require.Equal(t, "offset 4096, memory 4096 (default)", Default().String())
}

func TestExplainEINVAL(t *testing.T) {
	a := Alignment{Memory: 512, Offset: 4096, Source: SourceSysfs}
	cases := []struct {
		name          string
		off           int64
		n             int
		addr          uintptr
		bad           [3]bool // offset, length, address
		want, wantNot []string
	}{
		{"offset", 4097, 4096, 0x10000, [3]bool{true, false, false},
			[]string{"offset 4097 is not a multiple of 4096"}, []string{"length", "address"}},
		{"length", 8192, 1000, 0x10000, [3]bool{false, true, false},
			[]string{"length 1000 is not a multiple of 4096"}, []string{"offset 8192", "address"}},
		{"address", 0, 4096, 0x10001, [3]bool{false, false, true},
			[]string{"buffer address 0x10001 is not aligned to 512"}, []string{"offset 0", "length 4096"}},
		{"address 512 is enough for memory", 0, 4096, 0x10200, [3]bool{}, []string{"all look aligned"}, []string{"not a multiple"}},
		{"all", 1, 2, 3, [3]bool{true, true, true},
			[]string{"offset 1 is not", "length 2 is not", "address 0x3 is not"}, nil},
		{"none", 4096, 8192, 0x20000, [3]bool{},
			[]string{"all look aligned", "cause is elsewhere", "offset 4096", "length 8192", "0x20000"}, []string{"not a multiple"}},
		{"empty request ignores the address", 0, 0, 0x3, [3]bool{}, []string{"all look aligned"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ExplainEINVAL("pread", c.off, c.n, c.addr, a)
			require.ErrorIs(t, err, syscall.EINVAL)
			require.NotErrorIs(t, err, ErrUnsupported)
			var e *EINVALError
			require.ErrorAs(t, err, &e)
			require.Equal(t, c.bad, [3]bool{e.OffsetMisaligned, e.LengthMisaligned, e.AddrMisaligned})
			require.Equal(t, c.bad != [3]bool{}, e.Misaligned())
			msg := err.Error()
			require.Contains(t, msg, "pread: invalid argument")
			require.Contains(t, msg, "(sysfs)")
			for _, s := range c.want {
				require.Contains(t, msg, s)
			}
			for _, s := range c.wantNot {
				require.NotContains(t, msg, s)
			}
		})
	}
}

func TestUnsupportedError(t *testing.T) {
	under := &os.PathError{Op: "open", Path: "/dev/shm/x", Err: syscall.EINVAL}
	err := fmt.Errorf("wrapped: %w", &UnsupportedError{Path: "/dev/shm", FSType: FSTypeName(MagicTmpfs), Err: under})
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.ErrorIs(t, err, syscall.EINVAL)
	require.EqualError(t, errors.Unwrap(err),
		"O_DIRECT is not supported by the filesystem at /dev/shm (tmpfs): open /dev/shm/x: invalid argument")
	require.EqualError(t, &UnsupportedError{Path: "/x", Err: syscall.EINVAL},
		"O_DIRECT is not supported by the filesystem at /x: invalid argument")
}

func TestFSTypeName(t *testing.T) {
	require.Equal(t, "ext4/ext2/ext3", FSTypeName(0xEF53))
	require.Equal(t, "xfs", FSTypeName(0x58465342))
	require.Equal(t, "btrfs", FSTypeName(0x9123683E))
	require.Equal(t, "tmpfs", FSTypeName(0x01021994))
	require.Equal(t, "overlayfs", FSTypeName(0x794c7630))
	require.Equal(t, "nfs", FSTypeName(0x6969))
	require.Equal(t, "zfs", FSTypeName(0x2FC12FC1))
	require.Equal(t, "f2fs", FSTypeName(0xF2F52010))
	require.Equal(t, "fuse", FSTypeName(0x65735546))
	require.Equal(t, "filesystem magic 0x12345678", FSTypeName(0x12345678))
	// Statfs_t.Type is a signed 32-bit field on some architectures.
	var signed int32 = -1859950530 // 0x9123683E
	require.Equal(t, "btrfs", FSTypeName(uint32(signed)))
}
