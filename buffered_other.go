//go:build !linux

package diskio

// Nowait reports that reads and writes go straight to the operating
// system: RWF_NOWAIT is Linux's.
func (f *File) Nowait() NowaitStatus {
	const why = "not Linux: plain os.File calls"
	return NowaitStatus{ReadsReason: why, WritesReason: why}
}
