package testenv

import "runtime/debug"

// CgoLinked reports whether the test binary was built with cgo (-race
// needs it; testify links package net, which uses it wherever a C
// compiler is installed). Such a binary starts the runtime's template
// thread at init: one OS thread more in a thread count.
func CgoLinked() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" {
			return s.Value == "1"
		}
	}
	return false
}
