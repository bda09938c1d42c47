//go:build !unix

// Package mem hands out memory for direct I/O. It needs mmap, so it exists
// only on Unix systems; elsewhere diskio uses plain os.File and needs no
// aligned memory.
package mem
