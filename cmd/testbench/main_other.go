//go:build !linux

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "testbench: io_uring, Linux AIO and the diskio scheduler need Linux")
	os.Exit(1)
}
