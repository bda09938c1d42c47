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
	plain  bool // not a regular file: every call goes to osf (plain_linux.go)

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

	streams streamSet // open StreamReaders, ended by Close (stream_linux.go)
	pc      pageCache // buffered files: page-cache reads and writes with RWF_NOWAIT (buffered_linux.go)
}

const refClosed = 1 << 62

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
	if pf, err := plainFile(name, osf); pf != nil || err != nil {
		return pf, err // a FIFO, device or directory: os.File's way
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

// Fd returns the descriptor the file's I/O uses, or ^uintptr(0) once the
// file is closed (or for a nil File), as os.File.Fd does. With O_DIRECT
// its offsets, lengths and buffers must be aligned, and bypassing the File
// also bypasses its size tracking: for an *os.File that does ordinary I/O
// on the same file, use OSFile. Never give Fd to os.NewFile: that
// *os.File's finalizer would close this File's descriptor.
func (f *File) Fd() uintptr {
	if p, ok := f.plainPath(); ok {
		return p.Fd()
	}
	if f.refs.Load()&refClosed != 0 {
		return ^uintptr(0)
	}
	return uintptr(f.fd)
}

// Direct reports whether the file uses O_DIRECT.
func (f *File) Direct() bool { return f != nil && f.direct }

// Alignment returns the alignment of O_DIRECT I/O on this file, in bytes:
// a read or write whose offset, length and memory address are multiples
// of it goes to the device as it is; any other is served through an
// aligned bounce buffer (a copy), and an unaligned write also reads the
// edge blocks it partly covers. It is 1 when the file is not direct.
// Memory from ReadBuffer, ReadMany and the streams is always aligned.
func (f *File) Alignment() int {
	if f == nil || !f.direct {
		return 1
	}
	return int(max(f.block, int64(f.mem)))
}

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
	var ioe *sched.IOError
	if errors.As(err, &ioe) {
		err = ioe.Err // the errno, as os.File's PathError holds it
	}
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

// pathErrAt is pathErr for a read or write of n bytes at off: a failure
// of the kernel's becomes an *IOError naming them.
func (f *File) pathErrAt(op string, off int64, n int, err error) error {
	var ioe *sched.IOError
	if errors.As(err, &ioe) {
		return &IOError{PathError: fs.PathError{Op: op, Path: f.name, Err: ioe.Err}, Off: off, Len: n, Request: ioe}
	}
	return f.pathErr(op, err)
}

// Close ends the file's StreamReaders (their reads then fail with
// os.ErrClosed), waits for the calls in progress, trims padding so the
// size on disk is exact, and closes the file. Calls after Close fail with
// os.ErrClosed.
func (f *File) Close() error {
	if p, ok := f.plainPath(); ok {
		return p.Close()
	}
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
	f.streams.end()
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

func fsTypeName(fd int) string {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return "unknown"
	}
	return dio.FSTypeName(uint32(st.Type))
}
