//go:build linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/sched"
)

// File is an open file whose I/O goes through a diskio scheduler. Its
// methods are safe for concurrent use, with the same guarantees as
// *os.File's (Read, Write and Seek share one cursor).
type File struct {
	name   string
	osf    *os.File // owns the descriptor; used for Stat and the final close
	fd     int
	s      *sched.Scheduler
	direct bool
	block  int64 // offset and length alignment with O_DIRECT
	mem    uintptr
	acc    int  // O_RDONLY, O_WRONLY or O_RDWR, as the caller opened it
	append bool // O_APPEND, done here: pwrite on an O_APPEND fd ignores the offset
	fixed  bool // fd is in the scheduler's registered file table

	// refs is the fdMutex-style count of calls in progress; refClosed
	// marks Close. Close waits for the count to drain before it touches
	// the descriptor, so in-flight I/O never meets a closed or reused fd.
	refs      atomic.Int64
	drained   chan struct{}
	drainOnce sync.Once // late callers also bring the count back to refClosed

	// mu guards the logical size, the on-disk size and the cursor.
	mu      sync.Mutex
	size    int64 // logical size: what Stat reports and reads stop at
	disk    int64 // on-disk size, larger than size after a padded O_DIRECT write
	writing int   // writes in flight: the kernel's size may hold their padding
	gen     int64 // counts changes of size and disk, so a racing fstat is not believed
	pos     int64

	// view and viewGen publish size and settled() to readers, which take
	// no lock (see readAt). view is the logical size, with viewPadded set
	// while !settled(); viewGen is gen, stored after view.
	view    atomic.Int64
	viewGen atomic.Int64

	// posMu serialises Read, Write and Seek, as the kernel's f_pos_lock
	// does for regular files.
	posMu sync.Mutex

	locks rangeLocks // blocks being written

	flush flushGroup // Sync and Datasync: group commit, sticky failure (sync_linux.go)
}

const refClosed = 1 << 62

const viewPadded = 1 << 62 // in File.view: padding or writes outstanding

// publish makes size and settled() visible to lock-free readers; call it
// with f.mu held after any change. view is stored before viewGen, so a
// reader that sees the new generation also sees the new view.
func (f *File) publish() {
	v := f.size
	if !f.settled() {
		v |= viewPadded
	}
	f.view.Store(v)
	f.viewGen.Store(f.gen)
}

// changed records a change of size, disk or writing (f.mu held).
func (f *File) changed() {
	f.gen++
	f.publish()
}

var errWriteAtInAppendMode = errors.New("os: invalid use of WriteAt on file opened with O_APPEND")

// Open opens the named file for reading, like os.Open.
func Open(name string) (*File, error) { return OpenFile(name, os.O_RDONLY, 0) }

// Create creates or truncates the named file, like os.Create.
func Create(name string) (*File, error) {
	return OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens the named file with the flags and permissions of
// os.OpenFile (which does the opening, so errors are exactly its errors),
// then switches the descriptor to O_DIRECT where the filesystem allows.
func OpenFile(name string, flag int, perm fs.FileMode, opts ...Option) (*File, error) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	s := o.sched
	if s == nil {
		var err error
		if s, err = sched.Default(); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	flag &^= unix.O_DIRECT // ours to decide
	osf, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	f := &File{
		name:    name,
		osf:     osf,
		fd:      int(osf.Fd()),
		s:       s,
		acc:     flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR),
		append:  flag&os.O_APPEND != 0,
		drained: make(chan struct{}),
	}
	if err := f.setup(o.direct); err != nil {
		if f.fd != int(osf.Fd()) {
			unix.Close(f.fd)
		}
		osf.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	// A File dropped without Close must still leave the registered file
	// table before its descriptor is closed and its number reused (the
	// os.File's own finalizer runs only after this one).
	runtime.SetFinalizer(f, (*File).Close)
	return f, nil
}

// setup clears O_APPEND on the descriptor, chooses direct or buffered I/O,
// learns the alignment and the size.
func (f *File) setup(mode DirectMode) error {
	fl, err := unix.FcntlInt(uintptr(f.fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	fl &^= unix.O_APPEND
	var st unix.Stat_t
	if err := unix.Fstat(f.fd, &st); err != nil {
		return err
	}
	regular := st.Mode&unix.S_IFMT == unix.S_IFREG
	if mode != DirectOff && regular && f.acc == os.O_WRONLY {
		// Read-modify-write of edge blocks needs to read: use a second,
		// read-write descriptor if the permissions allow; otherwise stay
		// buffered (no alignment, so no reads needed).
		// O_SYNC and O_DSYNC carry over: F_SETFL cannot set them later.
		if rw, err := unix.Open("/proc/self/fd/"+strconv.Itoa(f.fd), unix.O_RDWR|unix.O_CLOEXEC|fl&unix.O_SYNC, 0); err == nil {
			f.fd = rw
		} else if mode == DirectRequired {
			return err
		} else {
			mode = DirectOff
		}
	}
	if mode != DirectOff && regular {
		if err := setfl(f.fd, fl|unix.O_DIRECT); err == nil {
			a, aerr := dio.ForFD(f.fd)
			if aerr == nil {
				f.direct, f.block, f.mem = true, int64(a.Offset), uintptr(a.Memory)
			} else if mode == DirectRequired {
				return aerr
			}
		} else if mode == DirectRequired {
			return &dio.UnsupportedError{Path: f.name, FSType: fsTypeName(f.fd), Err: err}
		}
	}
	if !f.direct {
		if err := setfl(f.fd, fl); err != nil {
			return err
		}
	}
	f.size, f.disk = st.Size, st.Size
	f.publish()
	if f.s.RegisterFile(f.fd) == nil {
		f.fixed = true
	}
	return nil
}

// Name returns the name the file was opened with.
func (f *File) Name() string { return f.name }

// Fd returns the descriptor the file's I/O uses. With O_DIRECT its offsets,
// lengths and buffers must be aligned; bypassing the File also bypasses its
// size tracking.
func (f *File) Fd() uintptr { return uintptr(f.fd) }

// Direct reports whether the file uses O_DIRECT.
func (f *File) Direct() bool { return f.direct }

// acquire counts a call in; it fails once Close has begun.
func (f *File) acquire(op string) error {
	if f.refs.Add(1)&refClosed != 0 {
		f.release()
		return &fs.PathError{Op: op, Path: f.name, Err: os.ErrClosed}
	}
	return nil
}

func (f *File) release() {
	if f.refs.Add(-1) == refClosed {
		f.drainOnce.Do(func() { close(f.drained) })
	}
}

func (f *File) pathErr(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if errors.Is(err, sched.ErrClosed) {
		err = os.ErrClosed
	}
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

// Read reads up to len(b) bytes at the cursor and advances it. At end of
// file it returns 0, io.EOF.
func (f *File) Read(b []byte) (int, error) {
	if err := f.acquire("read"); err != nil {
		return 0, err
	}
	defer f.release()
	f.posMu.Lock()
	defer f.posMu.Unlock()
	if len(b) == 0 {
		return 0, nil
	}
	f.mu.Lock()
	off := f.pos
	f.mu.Unlock()
	n, err := f.readAt(b, off)
	f.mu.Lock()
	f.pos += int64(n)
	f.mu.Unlock()
	if n == 0 && err == nil {
		err = io.EOF
	}
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, f.pathErr("read", err)
}

// ReadAt reads len(b) bytes at off. It returns n < len(b) only with an
// error, io.EOF at end of file.
func (f *File) ReadAt(b []byte, off int64) (int, error) {
	// The order of checks is os.File's.
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: errors.New("negative offset")}
	}
	if len(b) == 0 {
		return 0, nil
	}
	if err := f.acquire("read"); err != nil {
		return 0, err
	}
	defer f.release()
	n, err := f.readAt(b, off)
	if err == nil && n < len(b) {
		err = io.EOF
	}
	return n, f.pathErr("read", err)
}

// readAt reads what lies in [off, off+len(b)) below the logical size; it
// returns fewer bytes (and no error) at end of file.
func (f *File) readAt(b []byte, off int64) (int, error) {
	if f.acc == os.O_WRONLY {
		return 0, syscall.EBADF
	}
	if off+int64(len(b)) < 0 {
		return 0, syscall.EINVAL // the kernel's check: the range overflows
	}
	// Only while our own padded writes are outstanding does the file on
	// disk extend past the logical size; otherwise the kernel's end of
	// file is the truth (other descriptors may have moved it). No lock:
	// the generation is read before the view, and again after the read.
	gen := f.viewGen.Load()
	view := f.view.Load()
	size := view &^ viewPadded
	if view&viewPadded != 0 {
		if off >= size {
			return 0, nil
		}
		if rest := size - off; int64(len(b)) > rest {
			b = b[:rest]
		}
	}
	if testHookReadAfterView != nil {
		testHookReadAfterView()
	}
	var n int
	var err error
	if !f.direct || f.aligned(b, off) {
		n, err = f.s.ReadAt(f.fd, b, off)
	} else {
		n, err = f.bounceRead(b, off)
	}
	// A write of ours that began during the read may have padded its last
	// block already, or extended the file with data the read met before
	// it landed: past the size we started from, the bytes are not known
	// to be data. (Unchanged generation: no write of ours overlapped.)
	if end := off + int64(n); end > size && f.viewGen.Load() != gen {
		size = min(size, f.view.Load()&^viewPadded) // a truncate may have shrunk it
		n = int(max(size-off, 0))
	}
	return n, err
}

// testHookReadAfterView, when set by a test, runs between readAt's look at
// the size and its read, to widen the race with a concurrent write.
var testHookReadAfterView func()

// bounceRead reads through aligned bounce buffers, at most maxBounce at a
// time; it returns fewer bytes (and no error) at end of file.
func (f *File) bounceRead(b []byte, off int64) (int, error) {
	done := 0
	for done < len(b) {
		chunk := b[done:]
		start := f.alignDown(off + int64(done))
		end := f.alignUp(off + int64(done+len(chunk)))
		if end-start > maxBounce {
			end = start + maxBounce
			chunk = chunk[:end-(off+int64(done))]
		}
		buf := f.getBounce(int(end - start))
		n, err := f.s.ReadAt(f.fd, buf, start)
		skip := int(off + int64(done) - start)
		m := 0
		if n > skip {
			m = copy(chunk, buf[skip:n])
		}
		f.putBounce(buf)
		done += m
		if err != nil || m < len(chunk) {
			return done, err // end of file
		}
	}
	return done, nil
}

// settled reports (with f.mu held) that the kernel's size is the logical
// size: no padding of ours is outstanding and no write of ours is in
// flight (it may have padded already without having told us).
func (f *File) settled() bool { return f.disk == f.size && f.writing == 0 }

// sizeNow returns the logical size. Without padding of our own outstanding
// it asks the kernel, since other descriptors may have changed the size;
// with padding outstanding (between an unaligned O_DIRECT write that grew
// the file and the next Sync or Close) our record is the truth and other
// descriptors' changes to the size are not seen.
func (f *File) sizeNow() (int64, error) {
	f.mu.Lock()
	if !f.settled() {
		defer f.mu.Unlock()
		return f.size, nil
	}
	gen := f.gen
	f.mu.Unlock()
	var st unix.Stat_t
	if err := unix.Fstat(f.fd, &st); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// Believe the kernel only if nothing of ours changed the file while
	// it answered (a write, a truncate, a trim of padding).
	if f.settled() && f.gen == gen {
		f.size, f.disk = st.Size, st.Size
		f.publish()
	}
	return f.size, nil
}

const maxBounce = 1 << 20

func (f *File) aligned(b []byte, off int64) bool {
	return off%f.block == 0 && int64(len(b))%f.block == 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(b)))%f.mem == 0
}

func (f *File) alignDown(off int64) int64 { return off - off%f.block }
func (f *File) alignUp(off int64) int64   { return f.alignDown(off + f.block - 1) }

// Write writes b at the cursor (at the end with O_APPEND) and advances it.
func (f *File) Write(b []byte) (int, error) {
	if err := f.acquire("write"); err != nil {
		return 0, err
	}
	defer f.release()
	// A write refused for the access mode, or of nothing, does not move
	// the cursor, not even to the end with O_APPEND.
	if f.acc == os.O_RDONLY {
		return 0, f.pathErr("write", syscall.EBADF)
	}
	if err := f.flush.failed(); err != nil {
		return 0, err // the first failed flush, for ever (sync_linux.go)
	}
	if len(b) == 0 {
		return 0, nil
	}
	f.posMu.Lock()
	defer f.posMu.Unlock()
	f.mu.Lock()
	off := f.pos
	f.mu.Unlock()
	if f.append {
		size, err := f.sizeNow()
		if err != nil {
			return 0, f.pathErr("write", err)
		}
		off = size
	}
	n, err := f.writeAt(b, off, 0)
	f.mu.Lock()
	f.pos = off + int64(n)
	f.mu.Unlock()
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	return n, f.pathErr("write", err)
}

// WriteString is like Write, but writes the contents of s.
func (f *File) WriteString(s string) (int, error) {
	return f.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// WriteAt writes b at off. Like os.File it refuses files opened with
// O_APPEND.
func (f *File) WriteAt(b []byte, off int64) (int, error) {
	// The order of checks is os.File's.
	if f.append {
		return 0, errWriteAtInAppendMode
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "writeat", Path: f.name, Err: errors.New("negative offset")}
	}
	if len(b) == 0 {
		return 0, nil
	}
	if err := f.acquire("write"); err != nil {
		return 0, err
	}
	defer f.release()
	if err := f.flush.failed(); err != nil {
		return 0, err // the first failed flush, for ever (sync_linux.go)
	}
	n, err := f.writeAt(b, off, 0)
	return n, f.pathErr("write", err)
}

// writeAt writes b at off; rwf are RWF_* flags for every write it issues
// (RWF_DSYNC: WriteAtDSync).
func (f *File) writeAt(b []byte, off int64, rwf uint32) (int, error) {
	if f.acc == os.O_RDONLY {
		return 0, syscall.EBADF
	}
	if len(b) == 0 {
		return 0, nil
	}
	if off+int64(len(b)) < 0 {
		return 0, syscall.EINVAL // the kernel's check: the range overflows
	}
	if !f.direct {
		f.startWrite()
		n, err := f.s.WriteAtFlags(f.fd, b, off, rwf)
		f.grow(off+int64(n), off+int64(n))
		return n, err
	}
	done := 0
	for done < len(b) {
		n, err := f.writeChunk(b[done:], off+int64(done), rwf)
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// writeChunk writes a prefix of b at off through one aligned span of at
// most maxBounce bytes, reading the partial edge blocks first. The blocks
// of the span are locked, so writers of other bytes of the same blocks
// wait instead of overwriting this update with stale data.
func (f *File) writeChunk(b []byte, off int64, rwf uint32) (int, error) {
	start, end := f.alignDown(off), f.alignUp(off+int64(len(b)))
	if end-start > maxBounce {
		end = start + maxBounce
		b = b[:end-off]
	}
	f.locks.lock(start, end)
	defer f.locks.unlock(start, end)

	if f.aligned(b, off) {
		f.startWrite()
		n, err := f.s.WriteAtFlags(f.fd, b, off, rwf)
		f.grow(off+int64(n), off+int64(n))
		return n, err
	}
	buf := f.getBounce(int(end - start))
	defer f.putBounce(buf)
	size, err := f.sizeNow()
	if err != nil {
		return 0, err
	}
	// Edge blocks that hold data we keep are read first; the bytes of
	// them past the logical size are zeros, as a hole reads.
	wend := off + int64(len(b))
	if err := f.fillEdge(buf, start, off, wend, size); err != nil {
		return 0, err
	}
	if last := end - f.block; last > start {
		if err := f.fillEdge(buf[last-start:], last, off, wend, size); err != nil {
			return 0, err
		}
	}
	copy(buf[off-start:], b)
	f.startWrite()
	n, err := f.s.WriteAtFlags(f.fd, buf, start, rwf)
	written := 0
	if n > int(off-start) {
		written = min(len(b), n-int(off-start))
	}
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	f.grow(off+int64(written), start+int64(n))
	return written, err
}

// fillEdge prepares the block at offset at for a read-modify-write of
// [off, end): unless the write covers it whole, its current bytes below the
// logical size, zeros above.
func (f *File) fillEdge(blk []byte, at, off, end, size int64) error {
	blk = blk[:f.block]
	if off <= at && at+f.block <= end {
		return nil // overwritten whole
	}
	if at >= size {
		clear(blk)
		return nil
	}
	n, err := f.s.ReadAt(f.fd, blk, at)
	if err != nil {
		return err
	}
	if keep := size - at; keep < int64(n) {
		n = int(keep)
	}
	clear(blk[n:])
	return nil
}

// startWrite counts a write in flight; grow counts it out.
func (f *File) startWrite() {
	f.mu.Lock()
	f.writing++
	f.changed()
	f.mu.Unlock()
}

// grow records a write that ended at logical end and on-disk end.
func (f *File) grow(end, diskEnd int64) {
	f.mu.Lock()
	f.size = max(f.size, end)
	f.disk = max(f.disk, diskEnd)
	f.writing--
	f.changed()
	f.mu.Unlock()
}

// Seek sets the cursor for the next Read or Write, like os.File.Seek
// (io.SeekEnd is relative to the logical size).
func (f *File) Seek(offset int64, whence int) (int64, error) {
	if err := f.acquire("seek"); err != nil {
		return 0, err
	}
	defer f.release()
	f.posMu.Lock()
	defer f.posMu.Unlock()
	var size int64
	if whence == io.SeekEnd || whence == unix.SEEK_DATA || whence == unix.SEEK_HOLE {
		var err error
		if size, err = f.sizeNow(); err != nil {
			return 0, f.pathErr("seek", err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.pos
	case io.SeekEnd:
		base = size
	case unix.SEEK_DATA, unix.SEEK_HOLE:
		// The kernel knows the file's extents; past our logical size
		// it answers like at end of file.
		pos, err := unix.Seek(f.fd, offset, whence)
		if err == nil && pos > size && whence == unix.SEEK_HOLE {
			pos = size
		}
		if err != nil {
			return 0, &fs.PathError{Op: "seek", Path: f.name, Err: err}
		}
		f.pos = pos
		return pos, nil
	default:
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	if base+offset < 0 {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	// The kernel decides what offsets the filesystem allows (ext4 refuses
	// past 16 TiB): ask it with the absolute target.
	if _, err := unix.Seek(f.fd, base+offset, io.SeekStart); err != nil {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: err}
	}
	f.pos = base + offset
	return f.pos, nil
}

// Stat returns the file's FileInfo; Size is the exact logical size.
func (f *File) Stat() (fs.FileInfo, error) {
	if err := f.acquire("stat"); err != nil {
		return nil, err
	}
	defer f.release()
	f.mu.Lock()
	gen := f.gen
	f.mu.Unlock()
	fi, err := f.osf.Stat()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.settled() && f.gen == gen {
		// No padding of ours: the kernel's size is the truth.
		f.size, f.disk = fi.Size(), fi.Size()
		f.publish()
		return fi, nil
	}
	return fileInfo{fi, f.size}, nil
}

type fileInfo struct {
	fs.FileInfo
	size int64
}

func (fi fileInfo) Size() int64 { return fi.size }

// Truncate changes the size of the file, like os.File.Truncate.
func (f *File) Truncate(size int64) error {
	if err := f.acquire("truncate"); err != nil {
		return err
	}
	defer f.release()
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	if f.acc == os.O_RDONLY {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	f.locks.lock(0, maxOffset)
	defer f.locks.unlock(0, maxOffset)
	if err := ignoringEINTR(func() error { return unix.Ftruncate(f.fd, size) }); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	f.mu.Lock()
	f.size, f.disk = size, size
	f.changed()
	f.mu.Unlock()
	return nil
}

const maxOffset = 1<<63 - 1

// trimPadding cuts the zeros a padded O_DIRECT write left past the logical
// size, so that the file's size on disk is exact.
func (f *File) trimPadding() error {
	f.locks.lock(0, maxOffset)
	defer f.locks.unlock(0, maxOffset)
	f.mu.Lock()
	size, disk := f.size, f.disk
	f.mu.Unlock()
	if disk == size {
		return nil
	}
	if err := ignoringEINTR(func() error { return unix.Ftruncate(f.fd, size) }); err != nil {
		return err
	}
	f.mu.Lock()
	f.disk = size
	f.changed()
	f.mu.Unlock()
	return nil
}

// Close waits for the calls in progress, trims padding so the size on disk
// is exact, and closes the file. Calls after Close fail with os.ErrClosed.
func (f *File) Close() error {
	for {
		old := f.refs.Load()
		if old&refClosed != 0 {
			return &fs.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
		}
		if f.refs.CompareAndSwap(old, old|refClosed) {
			if old == 0 {
				f.drainOnce.Do(func() { close(f.drained) })
			}
			break
		}
	}
	<-f.drained
	runtime.SetFinalizer(f, nil)
	terr := f.trimPadding()
	if f.fixed {
		// Before the descriptor is closed: a new file given the same
		// number must not inherit the registered slot.
		f.s.UnregisterFile(f.fd)
	}
	if f.fd != int(f.osf.Fd()) {
		unix.Close(f.fd)
	}
	cerr := f.osf.Close()
	if terr != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: terr}
	}
	return cerr
}

func setfl(fd, fl int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl)
	return err
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// rangeLocks locks byte ranges [start, end) of a file. Writers of
// overlapping block spans wait for each other; disjoint spans proceed in
// parallel.
type rangeLocks struct {
	mu     sync.Mutex
	cond   *sync.Cond
	active [][2]int64
}

func (l *rangeLocks) lock(start, end int64) {
	l.mu.Lock()
	if l.cond == nil {
		l.cond = sync.NewCond(&l.mu)
	}
	for l.overlaps(start, end) {
		l.cond.Wait()
	}
	l.active = append(l.active, [2]int64{start, end})
	l.mu.Unlock()
}

func (l *rangeLocks) overlaps(start, end int64) bool {
	for _, r := range l.active {
		if start < r[1] && r[0] < end {
			return true
		}
	}
	return false
}

func (l *rangeLocks) unlock(start, end int64) {
	l.mu.Lock()
	for i, r := range l.active {
		if r[0] == start && r[1] == end {
			l.active[i] = l.active[len(l.active)-1]
			l.active = l.active[:len(l.active)-1]
			break
		}
	}
	l.cond.Broadcast()
	l.mu.Unlock()
}

// Bounce buffers come from the scheduler (so they are registered buffers
// where io_uring allows) and are kept for reuse, per scheduler and size.
type bouncePool struct {
	mu   sync.Mutex
	free map[int][][]byte
}

var bouncePools sync.Map // *sched.Scheduler -> *bouncePool

func (f *File) getBounce(n int) []byte {
	c := bounceClass(n)
	p := f.pool()
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	b, err := f.s.AllocBuffer(c)
	if err != nil {
		// Out of memory for buffers: nothing sensible is left to do.
		panic("diskio: allocating a bounce buffer: " + err.Error())
	}
	return b[:n]
}

// bounceClass rounds n up to a power of two of at least 4 KiB, so that
// spans of many lengths share a few pools.
func bounceClass(n int) int {
	c := 4096
	for c < n {
		c <<= 1
	}
	return c
}

// maxPooled caps the buffers kept per size; more are given back.
const maxPooled = 64

func (f *File) putBounce(b []byte) {
	c := bounceClass(len(b))
	b = b[:c] // getBounce allocated c bytes
	p := f.pool()
	p.mu.Lock()
	if len(p.free[c]) < maxPooled {
		p.free[c] = append(p.free[c], b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	f.s.FreeBuffer(b)
}

func (f *File) pool() *bouncePool {
	if p, ok := bouncePools.Load(f.s); ok {
		return p.(*bouncePool)
	}
	p, _ := bouncePools.LoadOrStore(f.s, &bouncePool{free: make(map[int][][]byte)})
	return p.(*bouncePool)
}

func fsTypeName(fd int) string {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return "unknown"
	}
	return dio.FSTypeName(uint32(st.Type))
}
