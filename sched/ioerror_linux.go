//go:build linux

package sched

import "syscall"

// failed records errno as r's final error. It is the kernel's bare errno,
// as a system call gives it: the caller knows which request it made, and
// wraps the error once, at its API edge (package diskio's File gives an
// *fs.PathError or an *diskio.IOError, as os.File does).
func failed(r *request, errno syscall.Errno) error { return errno }
