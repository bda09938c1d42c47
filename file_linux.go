//go:build linux

package diskio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/internal/dio"
	"github.com/diskio-go/diskio/internal/sys"
	"github.com/diskio-go/diskio/sched"
)

// File is an open file whose I/O goes through a diskio scheduler. Its
// methods are safe for concurrent use, with the same guarantees as
// *os.File's (Read, Write and Seek share one cursor).
type File struct {
	name       string
	osf        *os.File    // owns the descriptor as the caller opened it; Stat, Fd and the final close
	bufferedFd int         // osf's descriptor: buffered, O_APPEND kept; exact-size tails and appends
	dataFd     int         // the descriptor reads and block writes use: a direct File's O_DIRECT one, else bufferedFd (not Fd's)
	handle     *sched.File // the scheduler's handle for dataFd: every request of the File's goes through it
	bf         *sched.File // the handle for bufferedFd: handle itself unless the File is direct
	page       int64       // the page cache's unit (at least a direct File's block): buffered and direct I/O never share one in flight
	access     int         // O_RDONLY, O_WRONLY or O_RDWR, as the caller opened it
	append     bool        // O_APPEND: every Write is the kernel's append (RWF_APPEND on bufferedFd)
	syncFd     bool        // every write through bufferedFd waits: it is O_SYNC or O_DSYNC, or on FUSE (writesThrough)

	life lifetime // calls in progress, and Close (lifetime_linux.go)

	cur cursor // Read, Write and Seek's offset

	flush flushGroup // Sync and Datasync: group commit, sticky failure (sync_linux.go)
	dur   durability // what a flush must still cover; durable writes in one trip (durability_linux.go)

	streams streamSet // open StreamReaders, ended by Close (stream_linux.go)

	// The File's mode, fixed at open: plain (kind is kindPlain: every
	// call is osf's), direct (direct is not nil) or page cache (neither:
	// cache is its state).
	kind   atomic.Int32 // what the File knows of its file's type: kindPlain, or what OpenFile or acquireOrPlain learnt (nonregular_linux.go)
	direct *directIO    // a direct File's alignment, registration and mixed writes (direct_linux.go); nil for any other
	cache  pageCache    // a page-cache File's reads and writes with RWF_NOWAIT (pagecache_linux.go); unused by any other
}

var errWriteAtInAppendMode = errors.New("os: invalid use of WriteAt on file opened with O_APPEND")

// Open opens the named file for reading, like os.Open.
func Open(name string) (*File, error) { return OpenFile(name, os.O_RDONLY, 0) }

// Create creates or truncates the named file, like os.Create.
func Create(name string) (*File, error) {
	return OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens the named file with the flags and permissions of
// os.OpenFile (which does the opening, so errors are exactly its errors).
// With the default options the file uses the page cache, and opening it
// costs one fstatfs more than os.OpenFile (see the package doc): nothing
// waits for the scheduler. With WithDirect(Direct) it also gets a second,
// O_DIRECT descriptor where the filesystem allows.
func OpenFile(name string, flag int, perm fs.FileMode, opts ...Option) (*File, error) {
	return openThrough(os.OpenFile, name, flag, perm, opts)
}

// fileOptions applies opts and finds the scheduler they name (the
// default one if none).
func fileOptions(name string, opts []Option) (options, *sched.Scheduler, error) {
	o := applyOptions(opts)
	s, err := o.scheduler()
	if err != nil {
		return o, nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return o, s, nil
}

// scheduler is the one WithScheduler named, else the process-wide one.
func (o *options) scheduler() (*sched.Scheduler, error) {
	if o.sched != nil {
		return o.sched, nil
	}
	return sched.Default()
}

// newFile makes the File for osf, a regular file opened with flag (fl
// is its status flags as F_GETFL gives them, or as far as they matter:
// O_SYNC, O_DSYNC, O_APPEND) and whose fstat is st, its cursor at pos; it
// owns osf from then on, and closes it on failure.
func newFile(name string, osf *os.File, s *sched.Scheduler, flag, fl int, pos int64, mode DirectMode, st *unix.Stat_t) (*File, error) {
	return newFileAt(false, name, osf, s, flag, fl, pos, mode, st)
}

// newFileAt is newFile; byPath says osf was just opened at name
// (OpenFile), whose directory's filesystem the scheduler may know
// already (sched.Scheduler.OpenPath).
func newFileAt(byPath bool, name string, osf *os.File, s *sched.Scheduler, flag, fl int, pos int64, mode DirectMode, st *unix.Stat_t) (*File, error) {
	f := &File{
		name:       name,
		osf:        osf,
		bufferedFd: int(osf.Fd()),
		dataFd:     int(osf.Fd()),
		access:     flag & unix.O_ACCMODE,
		append:     flag&os.O_APPEND != 0,
	}
	f.cur.pos.Store(pos)
	if fl&unix.O_NONBLOCK != 0 {
		// A regular file's reads and writes wait whatever O_NONBLOCK
		// says, os.File's included; but io_uring fails them with
		// EAGAIN on a non-blocking descriptor instead of waiting, and
		// the O_DIRECT descriptor would inherit the flag (openDirect).
		if err := blocking(f.bufferedFd); err != nil {
			osf.Close()
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		fl &^= unix.O_NONBLOCK
	}
	// The scheduler's handles, one per descriptor, named after the
	// File: the buffered one first (setup reports a fallback through
	// it), a direct File's own once setup has opened its descriptor.
	var err error
	if byPath {
		f.bf, err = s.OpenPath(f.bufferedFd, name)
	} else {
		f.bf, err = s.Open(f.bufferedFd, name)
	}
	if err == nil {
		f.handle = f.bf
		err = f.setup(mode, fl, st)
	}
	if err != nil {
		osf.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f, nil
}

// setup chooses direct or buffered I/O: with O_DIRECT the file gets a
// second descriptor (openDirect), while the caller's own descriptor stays
// as opened, buffered and with its O_APPEND: the partial pages of writes
// go through it. A File that stays buffered readies its page-cache state
// (setupCache).
func (f *File) setup(mode DirectMode, fl int, st *unix.Stat_t) error {
	regular := st != nil && st.Mode&unix.S_IFMT == unix.S_IFREG
	if regular {
		f.kind.Store(kindRegular)
	}
	f.syncFd = fl&(unix.O_SYNC|unix.O_DSYNC) != 0
	if !f.syncFd && writesThrough(f.bufferedFd, st) {
		// Before setupCache, whose reason would be O_SYNC's.
		f.cache.refuse(&f.cache.noWrite, &f.cache.writeReason, "a FUSE file: every write waits for the filesystem's daemon")
		f.syncFd = true
	}
	f.page = int64(os.Getpagesize()) // a direct File's may be larger (openDirect)
	f.dur.init()
	if mode != PageCache && regular {
		if err := f.openDirect(mode, fl); err != nil {
			return err
		}
	}
	if f.direct == nil {
		f.setupCache(fl, st)
	}
	return nil
}

// writesThrough reports whether fd, a regular file whose fstat is st (nil
// if not asked), is on FUSE, where a buffered write is sent to the
// filesystem's daemon and waits for its answer (unless the daemon took the
// kernel's write-back cache, which the file does not show): such writes
// go through the scheduler, never on their callers' threads. Only a
// filesystem without a device of its own (major 0: FUSE, tmpfs, btrfs,
// overlayfs, NFS) is asked for its type.
func writesThrough(fd int, st *unix.Stat_t) bool {
	if st == nil || unix.Major(st.Dev) != 0 {
		return false
	}
	var sfs unix.Statfs_t
	return sys.Fstatfs(fd, &sfs) == nil && uint32(sfs.Type) == dio.MagicFUSE
}

// openDirect makes f direct: a second descriptor, reopened through
// /proc/self/fd with O_DIRECT (O_RDWR where the permissions allow), for
// reads and whole-block writes (f.dataFd, its handle f.handle), and its
// alignment (f.direct).
// Where the reopen fails or the filesystem refuses O_DIRECT, f stays
// buffered and its scheduler is told (reportBuffered); with DirectRequired
// that is an error instead.
func (f *File) openDirect(mode DirectMode, fl int) error {
	buffered := func(required, why error) error {
		if mode == DirectRequired {
			return required
		}
		f.reportBuffered(why)
		return nil
	}
	acc := unix.O_RDWR
	if f.access == os.O_RDONLY {
		acc = unix.O_RDONLY
	}
	// O_SYNC and O_DSYNC carry over: F_SETFL cannot set them later.
	dfd, err := f.reopen(acc | unix.O_CLOEXEC | fl&unix.O_SYNC)
	if (err == unix.EACCES || err == unix.EPERM) && acc == unix.O_RDWR && f.access == os.O_WRONLY {
		// Write-only, on a file this process may not read: the
		// File never reads through dfd (its reads fail with
		// EBADF, as os.File's), so a write-only one serves.
		dfd, err = f.reopen(unix.O_WRONLY | unix.O_CLOEXEC | fl&unix.O_SYNC)
	}
	if err != nil {
		return buffered(err, err)
	}
	if err := setDirect(dfd, fl&^unix.O_APPEND); err != nil {
		sys.Close(dfd)
		return buffered(&dio.UnsupportedError{Path: f.name, FSType: fsTypeName(f.bufferedFd), Err: err}, nil)
	}
	a, err := dio.ForFD(dfd)
	if err != nil {
		sys.Close(dfd)
		return buffered(err, nil)
	}
	h, err := f.sched().Open(dfd, f.name)
	if err != nil {
		sys.Close(dfd)
		return err
	}
	f.dataFd, f.handle = dfd, h
	f.direct = newDirectIO(int64(a.Offset), uintptr(a.Memory))
	f.page = max(f.direct.block, int64(os.Getpagesize()))
	// A direct File dropped without Close must close its second
	// descriptor, and leave the registered file table before that
	// (registerSoon): the os.File's own finalizer runs after this one.
	// A page-cache File has nothing but the os.File's.
	runtime.SetFinalizer(f, (*File).Close)
	return nil
}

// errDirectDropped is why a descriptor is not direct although F_SETFL
// took O_DIRECT without an error.
var errDirectDropped = errors.New("fcntl(F_SETFL) left O_DIRECT unset")

// setDirect sets fd's status flags to fl with O_DIRECT, and checks with
// F_GETFL that the descriptor has O_DIRECT: where it has not, the File
// is buffered (DirectRequired fails), whatever F_SETFL said.
func setDirect(fd, fl int) error {
	if _, err := sys.Fcntl(fd, unix.F_SETFL, fl|unix.O_DIRECT); err != nil {
		return err
	}
	got, err := sys.Fcntl(fd, unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if got&unix.O_DIRECT == 0 {
		return errDirectDropped
	}
	return nil
}

// sched returns the File's scheduler.
func (f *File) sched() *sched.Scheduler { return f.handle.Scheduler() }

// reopen opens the File's file again through /proc/self/fd, with flag.
func (f *File) reopen(flag int) (int, error) {
	return sys.Open("/proc/self/fd/"+strconv.Itoa(f.bufferedFd), flag, 0)
}

// Name returns the name the file was opened with.
func (f *File) Name() string { return f.name }

// Fd returns the descriptor as OpenFile opened it, or ^uintptr(0) once
// the file is closed (or for a nil File), as os.File.Fd does. It is
// buffered (the File's O_DIRECT descriptor is a second one of its own) and
// keeps the caller's flags, O_APPEND included; writes through it are seen
// by the File, as another descriptor's are. Never give Fd to os.NewFile:
// that *os.File's finalizer would close this File's descriptor. Use OSFile
// for an *os.File.
func (f *File) Fd() uintptr {
	if p, ok := f.plainPath(); ok {
		return p.Fd()
	}
	if f.life.closed() {
		return ^uintptr(0)
	}
	return uintptr(f.bufferedFd)
}

// Direct reports whether the file uses O_DIRECT.
func (f *File) Direct() bool { return f != nil && f.direct != nil }

// Alignment returns the alignment of O_DIRECT I/O on this file, in bytes:
// a read or write whose offset, length and memory address are multiples
// of it goes to the device as it is. Any other read is served through an
// aligned bounce buffer (a copy); any other write writes its whole
// blocks directly (bounced if the memory is unaligned) and its partial
// edge pages through the page cache, with exactly the bytes given. It is
// 1 when the file is not direct. Memory from ReadBuffer, ReadMany and the
// streams is always aligned.
func (f *File) Alignment() int {
	if f == nil || f.direct == nil {
		return 1
	}
	return int(max(f.direct.block, int64(f.direct.mem)))
}

// acquire counts a call in; it fails once Close has begun.
func (f *File) acquire(op string) error {
	if f.life.refs.Add(1)&refClosed != 0 { // life.acquire, written out to keep this inlinable
		return f.closedErr(op)
	}
	return nil
}

func (f *File) closedErr(op string) error {
	f.life.release()
	return &fs.PathError{Op: op, Path: f.name, Err: os.ErrClosed}
}

func (f *File) release() { f.life.release() }

func (f *File) pathErr(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if errors.Is(err, sched.ErrClosed) {
		err = os.ErrClosed
	}
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

// pathErrAt is pathErr for a read or write of n bytes at off: a failure
// of the kernel's becomes an *IOError naming them: the one layer over
// the errno, which the scheduler and the system calls give bare.
func (f *File) pathErrAt(op string, off int64, n int, err error) error {
	if err == nil || err == io.EOF {
		return err // before errors.As, whose target would escape: no allocation per read
	}
	// The kernel's errno, bare from the scheduler and from the system
	// calls made on the caller alike.
	errno, _ := err.(syscall.Errno)
	switch errno {
	case 0, unix.EBADF, unix.EISDIR, unix.EINVAL:
		// Not a failure at a range: the descriptor (write-only, a
		// directory) or the request (a directory's offset, an
		// alignment, explained by the scheduler) is refused whole.
		return f.pathErr(op, err)
	}
	return &IOError{PathError: fs.PathError{Op: op, Path: f.name, Err: errno}, Off: off, Len: n}
}

// Close ends the file's StreamReaders (their reads then fail with
// os.ErrClosed), waits for the calls in progress, and closes the file.
// Calls after Close fail with os.ErrClosed, on every kind of file, and
// never use the descriptor number again (the kernel may have given it
// to another file by then).
func (f *File) Close() error {
	if f == nil {
		return os.ErrInvalid
	}
	if !f.life.close() {
		return &fs.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	}
	if f.plain() {
		// Every call of a plain File reaches the descriptor through
		// the *os.File, whose own count keeps it until those in
		// progress are done; and its Close must come now, not after
		// them: it is what wakes a read blocked in the poller (a FIFO
		// nobody writes).
		return f.osf.Close()
	}
	f.streams.end()
	f.life.drained()
	// The handles end before the descriptors are closed: a registered
	// slot holds its own reference to the file. Every descriptor is
	// closed whatever any step says; a failure is the caller's, as
	// os.File's Close returns it.
	var err error
	if e := f.handle.Close(); e != nil {
		err = &fs.PathError{Op: "close", Path: f.name, Err: e}
	}
	if f.direct != nil {
		// The second handle and descriptor, and the finalizer that
		// would have closed them.
		runtime.SetFinalizer(f, nil)
		f.bf.Close() // never registered: nothing to fail
		if e := sys.Close(f.dataFd); e != nil {
			err = &fs.PathError{Op: "close", Path: f.name, Err: e}
		}
	}
	if e := f.osf.Close(); err == nil {
		err = e
	}
	return err
}

func fsTypeName(fd int) string {
	var st unix.Statfs_t
	if sys.Fstatfs(fd, &st) != nil {
		return "unknown"
	}
	return dio.FSTypeName(uint32(st.Type))
}
