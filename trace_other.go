//go:build !linux

package diskio

// FlushTrace writes the DISKIO_TRACE files; outside Linux there is no
// scheduler to trace and it does nothing.
func FlushTrace() error { return nil }
