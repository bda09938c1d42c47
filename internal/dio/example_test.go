package dio_test

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/diskio-go/diskio/internal/dio"
)

// A read of 100 bytes at offset 1000 from a buffer at 0x10001 failed with
// EINVAL on a device with 512-byte sectors: ExplainEINVAL says why.
func ExampleExplainEINVAL() {
	a := dio.Alignment{Memory: 512, Offset: 512, Source: dio.SourceStatx}
	err := dio.ExplainEINVAL("pread", 1000, 100, 0x10001, a)
	fmt.Println(err)
	fmt.Println(errors.Is(err, syscall.EINVAL))

	// What to read instead: the aligned span covering the request.
	start, n := a.Span(1000, 100)
	fmt.Println(start, n)
	// Output:
	// pread: invalid argument on O_DIRECT file: offset 1000 is not a multiple of 512; length 100 is not a multiple of 512; buffer address 0x10001 is not aligned to 512 (required alignment: offset 512, memory 512 (statx))
	// true
	// 512 1024
}
