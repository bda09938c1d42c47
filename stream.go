package diskio

// StreamOptions size a StreamReader or a StreamWriter. Zero values choose
// 512 KiB buffers and 8 of them in flight, where Glommio's sequential scan
// reaches an SSD's bandwidth; BenchmarkScan, and BenchmarkDurableSeqWrite
// for writers, measure other sizes on a given device.
type StreamOptions struct {
	// BufferSize is the bytes per read or write, rounded up to the
	// alignment.
	BufferSize int
	// ReadAhead is, for a StreamReader, the buffers kept in flight while
	// the reader consumes more; for a StreamWriter, the full buffers
	// being written while the caller fills the next one (the
	// write-behind). Memory is BufferSize x ReadAhead for a writer, and
	// BufferSize x (ReadAhead+1) for a reader that reads one buffer at a
	// time. A reader of small buffers with a deep read-ahead reads up to
	// 64 KiB at a time (ReadAhead/3 buffers, a power of two) and hands
	// out its BufferSize pieces: one read, one completion and one wake-up
	// per 16 buffers of 4 KiB; it keeps ReadAhead rounded up to whole
	// reads in flight, plus the read being consumed (4 KiB x 50: 320 KiB).
	// A reader with ReadAhead 1 reads one buffer at a time, when asked, on
	// the scheduler's idle fast path.
	ReadAhead int
}
