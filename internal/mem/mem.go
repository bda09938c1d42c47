//go:build unix

// Package mem hands out memory for direct I/O: mapped with mmap outside the Go
// heap, so it is page aligned (which satisfies every O_DIRECT memory alignment
// up to the page size), never moved by the runtime, never scanned by the
// garbage collector, and safe to give to the kernel for as long as an
// asynchronous request needs it.
package mem

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// PageSize is the system page size, the alignment of every mapping.
var PageSize = os.Getpagesize()

// Map returns size bytes of zeroed, page-aligned anonymous memory. The slice
// stays valid until Unmap; its address never changes.
func Map(size int) ([]byte, error) {
	if size <= 0 {
		return nil, fmt.Errorf("mem: invalid mapping size %d", size)
	}
	b, err := unix.Mmap(-1, 0, roundUp(size, PageSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mem: mmap %d bytes: %w", size, err)
	}
	return b[:size], nil
}

// Unmap releases memory returned by Map. b must be the slice Map returned,
// resliced only in length (its capacity names the mapping); the kernel must
// hold no request that uses it.
func Unmap(b []byte) error {
	if len(b) == 0 && cap(b) == 0 {
		return nil
	}
	if err := unix.Munmap(b[:cap(b)]); err != nil {
		return fmt.Errorf("mem: munmap: %w", err)
	}
	return nil
}

func roundUp(n, a int) int { return (n + a - 1) &^ (a - 1) }
