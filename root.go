package diskio

import (
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Root is an os.Root whose files are Files: its methods access only the
// files beneath one directory, refusing what os.Root refuses (a ".."
// that leaves the root, an absolute name, a symbolic link that leads out
// of the root or is absolute, on any component of a name, however the
// tree changes meanwhile), with os.Root's errors, because every name is
// resolved by os.Root itself. OpenFile, Open and Create open the file in
// the os.Root and make a File of it as OpenFile does; a direct File's
// second, O_DIRECT descriptor is the file already opened, reopened
// through /proc/self/fd, which resolves no name again. The other methods
// are os.Root's.
//
// Files opened through a Root stay open and usable after the Root is
// closed. The methods of a Root are safe for concurrent use.
type Root struct {
	root *os.Root
	opts []Option
}

// OpenRoot opens the named directory as os.OpenRoot does (following
// symbolic links in dir, failing with a *fs.PathError). The Files opened
// through the Root, and through the Roots its OpenRoot opens, take opts
// after the defaults SetDefaultOptions set at the time of each open, as
// for OpenFile.
func OpenRoot(dir string, opts ...Option) (*Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Root{root: r, opts: slices.Clone(opts)}, nil
}

// OpenInRoot opens the file name in the directory dir for reading, as
// os.OpenInRoot does: OpenRoot(dir, opts...) followed by Open(name), the
// Root closed before it returns.
func OpenInRoot(dir, name string, opts ...Option) (*File, error) {
	r, err := OpenRoot(dir, opts...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Open(name)
}

// Name returns the name of the directory given to OpenRoot. It is safe
// to call after Close.
func (r *Root) Name() string { return r.root.Name() }

// Close closes the Root; its methods fail after it. Files opened through
// it stay open.
func (r *Root) Close() error { return r.root.Close() }

// OpenFile opens the named file in the root with the flags and
// permissions of os.Root.OpenFile (which does the opening, so that errors
// are exactly its errors), as OpenFile does with the Root's options. The
// File's Name is the one os.Root gives its *os.File (the root's name
// joined with name).
func (r *Root) OpenFile(name string, flag int, perm fs.FileMode) (*File, error) {
	return r.openFile(name, flag, perm)
}

// Open opens the named file in the root for reading, like os.Root.Open.
func (r *Root) Open(name string) (*File, error) { return r.OpenFile(name, os.O_RDONLY, 0) }

// Create creates or truncates the named file in the root, like
// os.Root.Create.
func (r *Root) Create(name string) (*File, error) {
	return r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenRoot opens the named directory in the root, like os.Root.OpenRoot;
// the new Root has this one's options.
func (r *Root) OpenRoot(name string) (*Root, error) {
	sub, err := r.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &Root{root: sub, opts: r.opts}, nil
}

// ReadFile reads the named file in the root through a File and returns
// its contents, like os.Root.ReadFile.
func (r *Root) ReadFile(name string) ([]byte, error) { return readFile(r.Open(name)) }

// WriteFile writes data to the named file in the root through a File,
// creating it with perm (before umask) or truncating it, like
// os.Root.WriteFile. It does not sync.
func (r *Root) WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	return writeAndClose(f, data)
}

// Mkdir is os.Root.Mkdir.
func (r *Root) Mkdir(name string, perm fs.FileMode) error { return r.root.Mkdir(name, perm) }

// MkdirAll is os.Root.MkdirAll.
func (r *Root) MkdirAll(name string, perm fs.FileMode) error { return r.root.MkdirAll(name, perm) }

// Remove is os.Root.Remove.
func (r *Root) Remove(name string) error { return r.root.Remove(name) }

// RemoveAll is os.Root.RemoveAll.
func (r *Root) RemoveAll(name string) error { return r.root.RemoveAll(name) }

// Rename is os.Root.Rename: both names are in the root.
func (r *Root) Rename(oldname, newname string) error { return r.root.Rename(oldname, newname) }

// Link is os.Root.Link: both names are in the root.
func (r *Root) Link(oldname, newname string) error { return r.root.Link(oldname, newname) }

// Symlink is os.Root.Symlink, which does not check oldname: the link may
// point anywhere, but the Root's methods refuse to follow it out.
func (r *Root) Symlink(oldname, newname string) error { return r.root.Symlink(oldname, newname) }

// Readlink is os.Root.Readlink.
func (r *Root) Readlink(name string) (string, error) { return r.root.Readlink(name) }

// Chmod is os.Root.Chmod (with its race on Unix: see os.Root).
func (r *Root) Chmod(name string, mode fs.FileMode) error { return r.root.Chmod(name, mode) }

// Chown is os.Root.Chown (with its race on Unix: see os.Root).
func (r *Root) Chown(name string, uid, gid int) error { return r.root.Chown(name, uid, gid) }

// Lchown is os.Root.Lchown.
func (r *Root) Lchown(name string, uid, gid int) error { return r.root.Lchown(name, uid, gid) }

// Chtimes is os.Root.Chtimes (with its race on Unix: see os.Root).
func (r *Root) Chtimes(name string, atime, mtime time.Time) error {
	return r.root.Chtimes(name, atime, mtime)
}

// Stat is os.Root.Stat.
func (r *Root) Stat(name string) (fs.FileInfo, error) { return r.root.Stat(name) }

// Lstat is os.Root.Lstat.
func (r *Root) Lstat(name string) (fs.FileInfo, error) { return r.root.Lstat(name) }

// FS returns a file system (an fs.FS) for the tree of files in the root,
// like os.Root.FS, whose Open returns a File (a Root's Open) and whose
// ReadFile reads through one; it also implements fs.StatFS,
// fs.ReadDirFS and fs.ReadLinkFS, with os.Root.FS's results. Names are
// fs.ValidPath's, as for os.Root.FS; anything else fails with a
// *fs.PathError wrapping fs.ErrInvalid.
func (r *Root) FS() fs.FS { return &rootFS{r: r, fsys: r.root.FS()} }

// rootFS is a Root's fs.FS: file data through Files, the rest os.Root's
// own fs.FS.
type rootFS struct {
	r    *Root
	fsys fs.FS
}

var (
	_ fs.StatFS     = (*rootFS)(nil)
	_ fs.ReadFileFS = (*rootFS)(nil)
	_ fs.ReadDirFS  = (*rootFS)(nil)
	_ fs.ReadLinkFS = (*rootFS)(nil)
)

// validRootFSPath is os.Root.FS's test of a name: an fs.ValidPath, and
// on Windows without a backslash.
func validRootFSPath(name string) bool {
	return fs.ValidPath(name) && (runtime.GOOS != "windows" || !strings.Contains(name, `\`))
}

func (rfs *rootFS) Open(name string) (fs.File, error) {
	if !validRootFSPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := rfs.r.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (rfs *rootFS) ReadFile(name string) ([]byte, error) {
	if !validRootFSPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	return rfs.r.ReadFile(name)
}

func (rfs *rootFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(rfs.fsys, name) }

func (rfs *rootFS) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(rfs.fsys, name) }

func (rfs *rootFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(rfs.fsys, name) }

func (rfs *rootFS) ReadLink(name string) (string, error) { return fs.ReadLink(rfs.fsys, name) }
