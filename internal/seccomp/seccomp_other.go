//go:build !linux

package seccomp

import "errors"

// Install fails: seccomp is Linux's.
func Install(s Set) error { return errors.New("seccomp: Linux only") }
