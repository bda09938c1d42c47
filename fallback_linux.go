//go:build linux

package diskio

// reportBuffered is called by openDirect for a File that asked for
// O_DIRECT (Direct) and runs buffered: it tells f's scheduler (its
// Options.OnFallback, its trace recorder). err is why, when the reopen
// failed; nil when the filesystem refused O_DIRECT on the reopened
// descriptor (fcntl F_SETFL, or the alignment query).
func (f *File) reportBuffered(err error) {
	reason := "the filesystem (" + fsTypeName(f.bufferedFd) + ") refused O_DIRECT"
	if err != nil {
		reason = "reopening for O_DIRECT failed: " + err.Error()
	}
	f.bf.ReportBuffered(reason)
}
