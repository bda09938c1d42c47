//go:build !linux

// Command sqlbench compares SQLite's default VFS with diskio's; diskio's
// scheduler, and so the comparison, is Linux's.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "sqlbench: Linux only")
	os.Exit(2)
}
