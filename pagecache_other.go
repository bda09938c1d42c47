//go:build !linux

package diskio

// nowait reports that reads and writes go straight to the operating
// system: RWF_NOWAIT is Linux's.
func (f *File) nowait() nowaitStatus {
	const why = "not Linux: plain os.File calls"
	return nowaitStatus{ReadsReason: why, WritesReason: why}
}
