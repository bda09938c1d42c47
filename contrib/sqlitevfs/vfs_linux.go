//go:build linux

package sqlitevfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/vfs"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/sys"
	"github.com/diskio-go/diskio/sched"
)

// VFS is a SQLite VFS whose main database, rollback journal, WAL and
// super-journal files are diskio Files. Temporary files (temp databases,
// statement journals, transient tables), which are never synced nor
// shared, are SQLite's default VFS's.
type VFS struct {
	opts Options
}

var _ vfs.VFSFilename = (*VFS)(nil)

// New returns a VFS; vfs.Register (or Register) names it for SQLite.
func New(opts Options) *VFS { return &VFS{opts: opts} }

// osVFS is ncruces' default VFS, for what is not a diskio File: paths,
// access checks and temporary files.
func osVFS() vfs.VFSFilename { return vfs.Find("").(vfs.VFSFilename) }

// FullPathname is the default VFS's: the absolute path, symbolic links
// resolved.
func (v *VFS) FullPathname(name string) (string, error) {
	return osVFS().FullPathname(name)
}

// Access is the default VFS's: access(2).
func (v *VFS) Access(name string, flags vfs.AccessFlag) (bool, error) {
	return osVFS().Access(name, flags)
}

// Delete removes the file; with syncDir, its directory is synced through
// the scheduler, so that the removal is durable (SQLite asks it when it
// deletes a rollback journal, which commits the transaction).
func (v *VFS) Delete(name string, syncDir bool) error {
	err := sys.Unlink(name)
	if err == unix.ENOENT {
		return vfs.SystemError(err, sqlite3.IOERR_DELETE_NOENT)
	}
	if err != nil {
		return vfs.SystemError(&fs.PathError{Op: "unlink", Path: name, Err: err}, sqlite3.IOERR_DELETE)
	}
	if syncDir {
		return v.syncDir(filepath.Dir(name))
	}
	return nil
}

// syncDir makes directory dir's entries durable through the scheduler:
// fdatasync, which SQLite's unix VFS issues on Linux for directories too
// (with fsync a synced commit in journal mode DELETE costs more CPU than
// the default VFS's; with fdatasync the same). A directory that
// cannot be opened is not an error, as for SQLite's unix VFS (some
// systems refuse to open directories).
func (v *VFS) syncDir(dir string) error {
	fd, err := sys.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil
	}
	defer sys.Close(fd)
	s, err := v.scheduler()
	if err == nil {
		err = s.Fdatasync(fd)
	}
	if err != nil {
		return vfs.SystemError(&fs.PathError{Op: "sync", Path: dir, Err: err}, sqlite3.IOERR_DIR_FSYNC)
	}
	return nil
}

func (v *VFS) scheduler() (*sched.Scheduler, error) {
	if v.opts.Scheduler != nil {
		return v.opts.Scheduler, nil
	}
	return sched.Default()
}

// Open is OpenFilename without URI parameters; SQLite calls
// OpenFilename.
func (v *VFS) Open(name string, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	if name == "" {
		return v.OpenFilename(nil, flags)
	}
	return v.open(name, flags)
}

// diskioFiles are the files SQLite syncs and shares between connections.
const diskioFiles = vfs.OPEN_MAIN_DB | vfs.OPEN_MAIN_JOURNAL | vfs.OPEN_WAL | vfs.OPEN_SUPER_JOURNAL

// OpenFilename opens a database, journal or WAL file as a diskio File,
// with the open flags and error codes of SQLite's unix VFS; temporary
// files go to the default VFS.
func (v *VFS) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	if name == nil || name.String() == "" || flags&diskioFiles == 0 || flags&(vfs.OPEN_DELETEONCLOSE|vfs.OPEN_MEMORY) != 0 {
		return osVFS().OpenFilename(name, flags)
	}
	f, flags, err := v.open(name.String(), flags)
	if err != nil {
		return nil, flags, err
	}
	if modeof := name.URIParameter("modeof"); modeof != "" {
		if err := setModeOf(f.f, modeof); err != nil {
			f.Close()
			return nil, flags, vfs.SystemError(err, sqlite3.IOERR_FSTAT)
		}
	}
	return f, flags, nil
}

func (v *VFS) open(name string, flags vfs.OpenFlag) (*file, vfs.OpenFlag, error) {
	oflags := unix.O_NOFOLLOW
	if flags&vfs.OPEN_EXCLUSIVE != 0 {
		oflags |= os.O_EXCL
	}
	if flags&vfs.OPEN_CREATE != 0 {
		oflags |= os.O_CREATE
	}
	readWrite := flags&vfs.OPEN_READWRITE != 0
	if readWrite {
		oflags |= os.O_RDWR
	} else {
		oflags |= os.O_RDONLY
	}
	isCreate := flags&vfs.OPEN_CREATE != 0
	isJournal := flags&(vfs.OPEN_MAIN_JOURNAL|vfs.OPEN_SUPER_JOURNAL|vfs.OPEN_WAL) != 0

	mode := v.opts.Mode
	if isJournal {
		mode = diskio.PageCache
	}
	opts := []diskio.Option{diskio.WithDirect(mode)}
	if v.opts.Scheduler != nil {
		opts = append(opts, diskio.WithScheduler(v.opts.Scheduler))
	}

	df, err := diskio.OpenFile(name, oflags, 0o666, opts...)
	if err != nil {
		switch {
		case errors.Is(err, syscall.EISDIR):
			return nil, flags, vfs.SystemError(err, sqlite3.CANTOPEN_ISDIR)
		case isCreate && isJournal && errors.Is(err, fs.ErrPermission) && !exists(name):
			// The directory does not let us create the journal.
			return nil, flags, vfs.SystemError(err, sqlite3.READONLY_DIRECTORY)
		case readWrite:
			// SQLite's unix VFS opens a file it may not write
			// read-only, and SQLite then answers writes with
			// SQLITE_READONLY.
			oflags = oflags&^(os.O_RDWR|os.O_CREATE) | os.O_RDONLY
			if ro, rerr := diskio.OpenFile(name, oflags, 0o666, opts...); rerr == nil {
				df, err = ro, nil
				flags = flags&^(vfs.OPEN_READWRITE|vfs.OPEN_CREATE) | vfs.OPEN_READONLY
			}
		}
		if err != nil {
			return nil, flags, vfs.SystemError(err, sqlite3.CANTOPEN)
		}
	}

	f := &file{
		vfs:   v,
		f:     df,
		fd:    int(df.Fd()),
		name:  name,
		flags: flags,
		psow:  true,
	}
	f.direct = df.Direct()
	if f.direct {
		f.unit = directUnit(df)
	}
	f.syncDir = isCreate && isJournal
	f.wal = flags&vfs.OPEN_WAL != 0
	// The WAL-index, as SQLite's unix VFS keeps it: the -shm file mapped
	// into every connection's memory, with OFD locks on its bytes
	// (ncruces' own implementation, so that connections through this
	// VFS and through the default one share it).
	f.shm = vfs.NewSharedMemory(name+"-shm", flags)
	return f, flags, nil
}

func exists(name string) bool {
	return sys.Access(name, unix.F_OK) == nil
}

// setModeOf gives f the mode, owner and group of file modeof (the
// "modeof" URI parameter), as SQLite's unix VFS does.
func setModeOf(f *diskio.File, modeof string) error {
	fi, err := os.Stat(modeof)
	if err != nil {
		return err
	}
	f.Chmod(fi.Mode())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		f.Chown(int(st.Uid), int(st.Gid))
	}
	return nil
}
