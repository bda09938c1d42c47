package dio

import (
	"fmt"
	"unsafe"
)

// Where an [Alignment] came from, the values of its Source field.
const (
	// SourceStatx: statx(2) with STATX_DIOALIGN (Linux 6.1 and later), the
	// kernel's own answer for this file.
	SourceStatx = "statx"
	// SourceBlkSSZGet: ioctl BLKSSZGET on the block device (the file itself,
	// or the device node under a regular file).
	SourceBlkSSZGet = "blksszget"
	// SourceSysfs: /sys/dev/block/MAJ:MIN/queue/logical_block_size of the
	// device holding the file.
	SourceSysfs = "sysfs"
	// SourceDefault: nothing better was known; 4096 for everything.
	SourceDefault = "default"
)

// DefaultAlignment is the alignment assumed when nothing better is known. It
// satisfies every common device (512-byte and 4 KiB logical blocks) and every
// DMA alignment up to the page size.
const DefaultAlignment = 4096

// Alignment is what direct I/O on one file requires.
//
// A request is aligned when its file offset and length are multiples of
// Offset and its buffer address is a multiple of Memory. A zero or negative
// Offset or Memory means "unknown" and the methods then use
// [DefaultAlignment], so the zero Alignment is conservative rather than
// permissive.
type Alignment struct {
	// Memory is the required alignment, in bytes, of buffer addresses. It
	// is what the kernel guarantees to accept; a kernel may accept less
	// (Linux 6.18 on virtio-blk takes a misaligned buffer that lies within
	// one page, and refuses it once it crosses a page boundary).
	Memory int
	// Offset is the required alignment, in bytes, of file offsets and of
	// request lengths.
	Offset int
	// Physical is the physical block size of the device when known, else 0.
	// Writes aligned to it (and a multiple of it long) avoid a
	// read-modify-write inside the device; see [Alignment.WriteUnit].
	Physical int
	// Source says where Memory and Offset came from: [SourceStatx],
	// [SourceBlkSSZGet], [SourceSysfs] or [SourceDefault].
	Source string
}

// Default returns the alignment assumed when nothing is known: 4096 for
// memory and offsets, physical block size unknown, Source "default".
func Default() Alignment {
	return Alignment{Memory: DefaultAlignment, Offset: DefaultAlignment, Source: SourceDefault}
}

// String describes a, for logs and command output, e.g.
// "offset 512, memory 512, physical 4096 (statx)".
func (a Alignment) String() string {
	src := a.Source
	if src == "" {
		src = "unknown source"
	}
	s := fmt.Sprintf("offset %d, memory %d", a.off(), a.mem())
	if a.Physical > 0 {
		s += fmt.Sprintf(", physical %d", a.Physical)
	}
	return s + " (" + src + ")"
}

// off is the effective offset and length alignment.
func (a Alignment) off() int {
	if a.Offset > 0 {
		return a.Offset
	}
	return DefaultAlignment
}

// mem is the effective memory alignment.
func (a Alignment) mem() int {
	if a.Memory > 0 {
		return a.Memory
	}
	return DefaultAlignment
}

// OffsetAligned reports whether the file offset off is a multiple of Offset.
func (a Alignment) OffsetAligned(off int64) bool { return off%int64(a.off()) == 0 }

// LengthAligned reports whether the request length n is a multiple of
// Offset.
func (a Alignment) LengthAligned(n int) bool { return n%a.off() == 0 }

// AddrAligned reports whether the buffer address p is a multiple of Memory.
func (a Alignment) AddrAligned(p uintptr) bool { return p%uintptr(a.mem()) == 0 }

// BufferAligned reports whether buf can be handed to an O_DIRECT request as
// it is: its address is a multiple of Memory and its length a multiple of
// Offset. An empty buffer is aligned.
func (a Alignment) BufferAligned(buf []byte) bool {
	if len(buf) == 0 {
		return true
	}
	return a.AddrAligned(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))) && a.LengthAligned(len(buf))
}

// Aligned reports whether reading or writing buf at file offset off
// satisfies every direct I/O constraint: offset, length and buffer address.
func (a Alignment) Aligned(off int64, buf []byte) bool {
	return a.OffsetAligned(off) && a.BufferAligned(buf)
}

// AlignDown rounds the file offset off down to a multiple of Offset.
// off must not be negative.
func (a Alignment) AlignDown(off int64) int64 { return off - off%int64(a.off()) }

// AlignUp rounds the file offset off up to a multiple of Offset.
// off must not be negative.
func (a Alignment) AlignUp(off int64) int64 {
	o := int64(a.off())
	if r := off % o; r != 0 {
		return off + o - r
	}
	return off
}

// AlignLen rounds the length n up to a multiple of Offset. n must not be
// negative.
func (a Alignment) AlignLen(n int) int { return int(a.AlignUp(int64(n))) }

// Span returns the smallest aligned range [start, start+length) that covers
// the n bytes at file offset off: the request to issue when the caller's
// range is not aligned (then copy through a bounce buffer, or read, modify
// and write back). off and n must not be negative.
func (a Alignment) Span(off int64, n int) (start int64, length int) {
	start = a.AlignDown(off)
	return start, int(a.AlignUp(off+int64(n)) - start)
}

// WriteUnit is the preferred size and alignment of writes: the physical
// block size when it is known and a multiple of Offset (writing whole
// physical blocks avoids a read-modify-write in the device), else Offset.
// Reads need only Offset.
func (a Alignment) WriteUnit() int {
	if o := a.off(); a.Physical > o && a.Physical%o == 0 {
		return a.Physical
	}
	return a.off()
}

// valid reports whether n is a plausible alignment: a positive power of two.
func valid(n int) bool { return n > 0 && n&(n-1) == 0 }
