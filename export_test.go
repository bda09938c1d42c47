//go:build linux

package diskio

// What the benchmarks of package diskio_test measure beyond the exported
// API: each is a thin wrapper, inlined where the original call was.

// ExportGetMem returns memory of at least n bytes from f's scheduler,
// holding one reference (getMem).
func ExportGetMem(f *File, n int) (*sharedMem, error) { return getMem(f.sched(), n) }

// ExportNewBuffer returns a Buffer viewing all of m, taking one reference
// on m (newBuffer).
func ExportNewBuffer(m *sharedMem) *Buffer { return newBuffer(m, m.buf) }

// ExportAppendReadMany is ReadMany appending the Buffers to dst
// (appendReadMany).
func ExportAppendReadMany(f *File, dst []*Buffer, ranges []Range, opts ReadManyOptions) ([]*Buffer, error) {
	return f.appendReadMany(dst, ranges, opts)
}

// ExportStreamWindow is how far apart the offsets of two successive reads
// of one of r's slots are: the slots times the bytes per read.
func ExportStreamWindow(r *StreamReader) int64 { return int64(len(r.slots) * r.readSize) }
