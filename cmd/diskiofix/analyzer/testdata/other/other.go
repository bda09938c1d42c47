// Package other wants *os.File from its callers.
package other

import "os"

// Use takes an *os.File.
func Use(f *os.File) {}
