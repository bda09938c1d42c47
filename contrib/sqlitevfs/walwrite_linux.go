//go:build linux

package sqlitevfs

// WAL frames in one write.
//
// SQLite writes each WAL frame as two writes: its 24-byte header, then
// the page right after it (and a new WAL begins with its 32-byte header,
// right before the first frame's). SQLite's unix VFS makes a system call
// of each; this VFS holds a write of at most heldMax bytes to a WAL file
// back and makes it together with the write that continues it: one
// pwrite of header and page, half the system calls of a bulk load.
//
// Held bytes are written before the file is used in any other way (a
// write elsewhere, a read, a sync, its size, a truncation, Close), so
// nothing but the write that follows can tell. Nothing else can either:
// other connections read only frames the WAL-index lists, and SQLite adds
// a frame to it after both of the frame's writes returned, holding the
// WAL's write lock throughout (which recovery needs too). A process
// killed between the two writes leaves a frame that was never listed,
// exactly as if it died before the header's write. Only WAL files hold
// writes back: a rollback journal's records are followed by writes to
// the database file, and a journal record still held when the process
// died would leave the database changed with no record to undo it.
const heldMax = 32

// hold reports whether the write of p at off is held back (copied; p is
// SQLite's memory): a write to a WAL of at most heldMax bytes, up to
// 2*heldMax held (a new WAL's header, then its first frame's). Nothing is
// held, or the held bytes end at off.
func (f *file) hold(p []byte, off int64) bool {
	if !f.wal || len(p) > heldMax || len(f.held)+len(p) > 2*heldMax {
		return false
	}
	if len(f.held) == 0 {
		f.heldOff = off
	}
	f.held = append(f.held, p...)
	return true
}

// heldEnd is where the held bytes end.
func (f *file) heldEnd() int64 { return f.heldOff + int64(len(f.held)) }

// writeJoined writes the held bytes and p, which continues them, in one
// write, and reports how much of p it wrote.
func (f *file) writeJoined(p []byte) (int, error) {
	f.joined = append(append(f.joined[:0], f.held...), p...)
	h := len(f.held)
	f.held = f.held[:0]
	m, err := f.f.WriteAt(f.joined, f.heldOff)
	return max(0, m-h), err
}

// flushHeld writes the held bytes, if any, before the file is used
// otherwise. A failure is the write's (SQLITE_FULL or SQLITE_IOERR_WRITE),
// whatever call found it.
func (f *file) flushHeld() error {
	if len(f.held) == 0 {
		return nil
	}
	_, err := f.f.WriteAt(f.held, f.heldOff)
	f.held = f.held[:0]
	return writeError(err)
}
