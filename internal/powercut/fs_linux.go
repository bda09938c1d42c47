package powercut

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Page is the granularity at which a cut tears a file's unsynced data.
const Page = 4096

// FS is a filesystem whose every change waits for the sync that makes it
// durable, and which loses the rest at Cut. Its methods are safe for
// concurrent use.
type FS struct {
	mu      sync.Mutex
	root    *inode
	nextIno uint64
	gen     uint64       // the mount generation being served; a cut ends it
	server  *fuse.Server // the mount being served, nil between Cut and Mount
	dir     string       // its mount point
	ops     Ops
}

// Ops counts the requests the filesystem received, by kind.
type Ops struct {
	Writes    uint64 // WRITE
	Fsyncs    uint64 // FSYNC without the datasync flag
	Datasyncs uint64 // FSYNC with it (fdatasync)
	Dirsyncs  uint64 // FSYNCDIR
	Flushes   uint64 // FLUSH (close): not durability
	Allocates uint64 // FALLOCATE
	Truncates uint64 // SETATTR of the size
	Refused   uint64 // requests refused with EIO after a cut
}

// inode is one file or directory of the model; it outlives mounts.
type inode struct {
	ino  uint64
	mode uint32 // type and permissions

	// A regular file: its data now, and after a power cut.
	data, durable []byte

	// A directory: its entries now, and after a power cut.
	entries, durableEntries map[string]*inode
}

func (i *inode) isDir() bool { return i.mode&syscall.S_IFMT == syscall.S_IFDIR }

// New returns an empty filesystem: a root directory, durable and empty.
func New() *FS {
	f := &FS{nextIno: 2}
	f.root = &inode{ino: 1, mode: syscall.S_IFDIR | 0o755, entries: map[string]*inode{}, durableEntries: map[string]*inode{}}
	return f
}

// Ops returns the requests counted so far.
func (f *FS) Ops() Ops {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ops
}

// ErrNoFUSE is returned by Mount where FUSE cannot be mounted.
var ErrNoFUSE = errors.New("powercut: FUSE cannot be mounted here")

// Mount serves the filesystem's state at dir (an existing empty
// directory): its first mount, or the machine back up after a Cut.
func (f *FS) Mount(dir string) error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w: no /dev/fuse (%v)", ErrNoFUSE, err)
	}
	f.mu.Lock()
	if f.server != nil {
		f.mu.Unlock()
		return errors.New("powercut: already mounted")
	}
	f.gen++
	root := &node{fs: f, m: f.root, gen: f.gen}
	f.mu.Unlock()
	timeout := time.Second
	srv, err := fs.Mount(dir, root, &fs.Options{
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
		MountOptions: fuse.MountOptions{
			FsName:        "powercut",
			Name:          "powercut",
			DirectMount:   os.Geteuid() == 0, // mount(2) as root, fusermount3 otherwise
			DisableXAttrs: true,
			MaxWrite:      1 << 20,
		},
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoFUSE, err)
	}
	f.mu.Lock()
	f.server, f.dir = srv, dir
	f.mu.Unlock()
	return nil
}

// Cut is the power cut. From the moment it is called the mounted
// filesystem refuses every request with EIO, so that nothing reaching it
// later is applied; then every change that was not made durable is
// dropped. With tear, each page of a file's unsynced data survives or not
// at random (rng's), and so does its unsynced size; without, exactly the
// durable state remains. The mount stays until Unmount (a writer still
// running sees EIO); Mount then serves what remains.
func (f *FS) Cut(tear bool, rng *rand.Rand) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // every node of the mount now answers EIO
	visited := map[*inode]bool{}
	var walk func(d *inode)
	walk = func(d *inode) {
		visited[d] = true
		d.entries = maps(d.durableEntries)
		for _, c := range d.entries {
			if visited[c] {
				continue
			}
			if c.isDir() {
				walk(c)
				continue
			}
			visited[c] = true
			c.data = cutData(c.data, c.durable, tear, rng)
			c.durable = slices.Clone(c.data)
		}
	}
	walk(f.root)
}

// Unmount unmounts the filesystem (after a Cut, or without one: then its
// state is kept as it is, durable or not). The processes that had files
// of it open must have exited or be killed for it to finish; it is
// retried, then detached.
func (f *FS) Unmount() error {
	f.mu.Lock()
	srv, dir := f.server, f.dir
	f.server = nil
	f.mu.Unlock()
	if srv == nil {
		return nil
	}
	return unmount(srv, dir)
}

// unmount unmounts srv's mount at dir, retrying while the kernel still
// holds files of it open (a killed process's, for a moment), then
// detaching it: the mount refuses everything by then, so what is still
// in flight is answered with EIO until the kernel lets go.
func unmount(srv *fuse.Server, dir string) error {
	var err error
	for try := 0; try < 50; try++ {
		if err = srv.Unmount(); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	if derr := unix.Unmount(dir, unix.MNT_DETACH); derr != nil {
		return fmt.Errorf("powercut: unmount %s: %v; detach: %w", dir, err, derr)
	}
	go srv.Wait()
	return nil
}

// cutData is what a cut leaves of a file whose data is now vol and whose
// durable data is dur.
func cutData(vol, dur []byte, tear bool, rng *rand.Rand) []byte {
	if !tear || slices.Equal(vol, dur) {
		return slices.Clone(dur)
	}
	size := len(dur)
	if rng.IntN(2) == 0 {
		size = len(vol)
	}
	out := make([]byte, size)
	for p := 0; p < size; p += Page {
		end := min(p+Page, size)
		src := dur
		if rng.IntN(2) == 0 {
			src = vol
		}
		if p < len(src) {
			copy(out[p:end], src[p:min(end, len(src))])
		}
	}
	return out
}

func maps(m map[string]*inode) map[string]*inode {
	c := make(map[string]*inode, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// node is the FUSE face of an inode during one mount generation.
type node struct {
	fs.Inode
	fs  *FS
	m   *inode
	gen uint64
}

var (
	_ fs.NodeLookuper   = (*node)(nil)
	_ fs.NodeGetattrer  = (*node)(nil)
	_ fs.NodeSetattrer  = (*node)(nil)
	_ fs.NodeCreater    = (*node)(nil)
	_ fs.NodeOpener     = (*node)(nil)
	_ fs.NodeReader     = (*node)(nil)
	_ fs.NodeWriter     = (*node)(nil)
	_ fs.NodeFsyncer    = (*node)(nil)
	_ fs.NodeFlusher    = (*node)(nil)
	_ fs.NodeAllocater  = (*node)(nil)
	_ fs.NodeMkdirer    = (*node)(nil)
	_ fs.NodeUnlinker   = (*node)(nil)
	_ fs.NodeRmdirer    = (*node)(nil)
	_ fs.NodeRenamer    = (*node)(nil)
	_ fs.NodeLinker     = (*node)(nil)
	_ fs.NodeReaddirer  = (*node)(nil)
	_ fs.NodeStatfser   = (*node)(nil)
	_ fs.NodeOpendirer  = (*node)(nil)
	_ fs.NodeReleaser   = (*node)(nil)
	_ fs.NodeGetxattrer = (*node)(nil)
)

// lock takes the filesystem's lock for a request of n; false (and the
// lock not held) when the power was cut since n's mount.
func (n *node) lock() bool {
	n.fs.mu.Lock()
	if n.fs.gen != n.gen {
		n.fs.ops.Refused++
		n.fs.mu.Unlock()
		return false
	}
	return true
}

func (n *node) unlock() { n.fs.mu.Unlock() }

func (n *node) attr(i *inode, out *fuse.Attr) {
	out.Ino = i.ino
	out.Mode = i.mode
	out.Nlink = 1
	out.Blksize = Page
	if !i.isDir() {
		out.Size = uint64(len(i.data))
		out.Blocks = (out.Size + 511) / 512
	}
	out.Uid, out.Gid = 0, 0
}

func (n *node) child(ctx context.Context, c *inode, out *fuse.EntryOut) *fs.Inode {
	n.attr(c, &out.Attr)
	return n.NewInode(ctx, &node{fs: n.fs, m: c, gen: n.gen}, fs.StableAttr{Mode: c.mode & syscall.S_IFMT, Ino: c.ino})
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !n.lock() {
		return nil, syscall.EIO
	}
	defer n.unlock()
	c, ok := n.m.entries[name]
	if !ok {
		return nil, syscall.ENOENT
	}
	return n.child(ctx, c, out), 0
}

func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if !n.lock() {
		return syscall.EIO
	}
	defer n.unlock()
	n.attr(n.m, &out.Attr)
	return 0
}

func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if !n.lock() {
		return syscall.EIO
	}
	defer n.unlock()
	if sz, ok := in.GetSize(); ok {
		if n.m.isDir() {
			return syscall.EISDIR
		}
		n.fs.ops.Truncates++
		n.m.data = resize(n.m.data, int(sz))
	}
	if mode, ok := in.GetMode(); ok {
		n.m.mode = n.m.mode&syscall.S_IFMT | mode&0o7777
	}
	n.attr(n.m, &out.Attr)
	return 0
}

// resize returns b at size n, zero-filled where it grew.
func resize(b []byte, n int) []byte {
	if n <= len(b) {
		return b[:n]
	}
	return append(b, make([]byte, n-len(b))...)
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if !n.lock() {
		return nil, nil, 0, syscall.EIO
	}
	defer n.unlock()
	if c, ok := n.m.entries[name]; ok {
		if flags&syscall.O_EXCL != 0 {
			return nil, nil, 0, syscall.EEXIST
		}
		if flags&syscall.O_TRUNC != 0 {
			c.data = c.data[:0]
		}
		return n.child(ctx, c, out), nil, 0, 0
	}
	c := &inode{ino: n.fs.nextIno, mode: syscall.S_IFREG | mode&0o7777}
	n.fs.nextIno++
	n.m.entries[name] = c
	return n.child(ctx, c, out), nil, 0, 0
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if !n.lock() {
		return nil, 0, syscall.EIO
	}
	defer n.unlock()
	if flags&syscall.O_TRUNC != 0 && !n.m.isDir() {
		n.fs.ops.Truncates++
		n.m.data = n.m.data[:0]
	}
	return nil, 0, 0
}

func (n *node) Opendir(ctx context.Context) syscall.Errno {
	if !n.lock() {
		return syscall.EIO
	}
	n.unlock()
	return 0
}

func (n *node) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if !n.lock() {
		return nil, syscall.EIO
	}
	defer n.unlock()
	if off >= int64(len(n.m.data)) {
		return fuse.ReadResultData(nil), 0
	}
	k := copy(dest, n.m.data[off:])
	return fuse.ReadResultData(dest[:k]), 0
}

func (n *node) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if !n.lock() {
		return 0, syscall.EIO
	}
	defer n.unlock()
	n.fs.ops.Writes++
	if end := int(off) + len(data); end > len(n.m.data) {
		n.m.data = resize(n.m.data, end)
	}
	copy(n.m.data[off:], data)
	return uint32(len(data)), 0
}

// Fsync is FSYNC of a file (fsync and fdatasync: data and size) and
// FSYNCDIR of a directory (its entries).
func (n *node) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	if !n.lock() {
		return syscall.EIO
	}
	defer n.unlock()
	switch {
	case n.m.isDir():
		n.fs.ops.Dirsyncs++
		n.m.durableEntries = maps(n.m.entries)
	case flags&1 != 0: // FUSE_FSYNC_FDATASYNC
		n.fs.ops.Datasyncs++
		n.m.durable = slices.Clone(n.m.data)
	default:
		n.fs.ops.Fsyncs++
		n.m.durable = slices.Clone(n.m.data)
	}
	return 0
}

// Flush is close(2)'s FLUSH: counted, and nothing made durable.
func (n *node) Flush(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	if !n.lock() {
		return syscall.EIO
	}
	defer n.unlock()
	n.fs.ops.Flushes++
	return 0
}

func (n *node) Release(ctx context.Context, fh fs.FileHandle) syscall.Errno { return 0 }

// Getxattr answers that there are none (security.capability is asked
// before every write).
func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENODATA
}

// Allocate is fallocate: mode 0 grows the file (zeros), KEEP_SIZE
// reserves nothing the model needs to keep; both are durable only after
// a sync, as the size is.
func (n *node) Allocate(ctx context.Context, fh fs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	if !n.lock() {
		return syscall.EIO
	}
	defer n.unlock()
	n.fs.ops.Allocates++
	switch mode {
	case 0:
		if end := int(off + size); end > len(n.m.data) {
			n.m.data = resize(n.m.data, end)
		}
	case unix.FALLOC_FL_KEEP_SIZE:
	default:
		return syscall.EOPNOTSUPP
	}
	return 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !n.lock() {
		return nil, syscall.EIO
	}
	defer n.unlock()
	if _, ok := n.m.entries[name]; ok {
		return nil, syscall.EEXIST
	}
	c := &inode{ino: n.fs.nextIno, mode: syscall.S_IFDIR | mode&0o7777, entries: map[string]*inode{}, durableEntries: map[string]*inode{}}
	n.fs.nextIno++
	n.m.entries[name] = c
	return n.child(ctx, c, out), 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if !n.lock() {
		return syscall.EIO
	}
	defer n.unlock()
	c, ok := n.m.entries[name]
	if !ok {
		return syscall.ENOENT
	}
	if c.isDir() {
		return syscall.EISDIR
	}
	delete(n.m.entries, name)
	return 0
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	if !n.lock() {
		return syscall.EIO
	}
	defer n.unlock()
	c, ok := n.m.entries[name]
	if !ok {
		return syscall.ENOENT
	}
	if !c.isDir() {
		return syscall.ENOTDIR
	}
	if len(c.entries) > 0 {
		return syscall.ENOTEMPTY
	}
	delete(n.m.entries, name)
	return 0
}

// Rename moves an entry: a change of both directories, each durable when
// that directory is synced.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if !n.lock() {
		return syscall.EIO
	}
	defer n.unlock()
	to, ok := newParent.(*node)
	if !ok || to.gen != n.gen {
		return syscall.EXDEV
	}
	c, ok := n.m.entries[name]
	if !ok {
		return syscall.ENOENT
	}
	old, exists := to.m.entries[newName]
	switch flags {
	case 0:
	case unix.RENAME_NOREPLACE:
		if exists {
			return syscall.EEXIST
		}
	case unix.RENAME_EXCHANGE:
		if !exists {
			return syscall.ENOENT
		}
		n.m.entries[name], to.m.entries[newName] = old, c
		return 0
	default:
		return syscall.EINVAL
	}
	if exists {
		if old == c {
			return 0
		}
		if old.isDir() != c.isDir() {
			if old.isDir() {
				return syscall.EISDIR
			}
			return syscall.ENOTDIR
		}
		if old.isDir() && len(old.entries) > 0 {
			return syscall.ENOTEMPTY
		}
	}
	delete(n.m.entries, name)
	to.m.entries[newName] = c
	return 0
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !n.lock() {
		return nil, syscall.EIO
	}
	defer n.unlock()
	t, ok := target.(*node)
	if !ok || t.m.isDir() {
		return nil, syscall.EPERM
	}
	if _, ok := n.m.entries[name]; ok {
		return nil, syscall.EEXIST
	}
	n.m.entries[name] = t.m
	return n.child(ctx, t.m, out), 0
}

func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	if !n.lock() {
		return nil, syscall.EIO
	}
	defer n.unlock()
	names := make([]string, 0, len(n.m.entries))
	for k := range n.m.entries {
		names = append(names, k)
	}
	slices.Sort(names)
	list := make([]fuse.DirEntry, 0, len(names))
	for _, k := range names {
		c := n.m.entries[k]
		list = append(list, fuse.DirEntry{Name: k, Ino: c.ino, Mode: c.mode & syscall.S_IFMT})
	}
	return fs.NewListDirStream(list), 0
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize = Page
	out.Frsize = Page
	out.Blocks = 1 << 24
	out.Bfree = 1 << 23
	out.Bavail = 1 << 23
	out.Files = 1 << 20
	out.Ffree = 1 << 19
	out.NameLen = 255
	return 0
}
