//go:build unix

package mem

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestMapAlignedZeroedWritable(t *testing.T) {
	for _, size := range []int{1, 512, 4096, 4097, 1 << 20} {
		b, err := Map(size)
		require.NoError(t, err)
		require.Len(t, b, size)
		require.Zero(t, uintptr(unsafe.Pointer(&b[0]))%uintptr(PageSize), "mapping not page aligned")
		require.Equal(t, make([]byte, size), b, "mapping not zeroed")
		for i := range b {
			b[i] = byte(i)
		}
		require.NoError(t, Unmap(b))
	}
}

func TestMapRejectsBadSize(t *testing.T) {
	for _, size := range []int{0, -1} {
		_, err := Map(size)
		require.Error(t, err)
	}
}

func ExampleMap() {
	buf, err := Map(64 << 10) // 64 KiB for O_DIRECT reads
	if err != nil {
		panic(err)
	}
	defer Unmap(buf)
	_ = buf
}
