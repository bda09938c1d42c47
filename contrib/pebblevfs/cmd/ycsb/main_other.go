//go:build !linux

// Command ycsb compares Pebble on vfs.Default and on diskio; diskio's
// scheduler exists on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "ycsb: diskio's scheduler runs on Linux only")
	os.Exit(1)
}
