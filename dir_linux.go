//go:build linux

package diskio

import (
	"io"
	"io/fs"
	"os"

	"github.com/diskio-go/diskio/internal/sys"
)

// Directory listing, like os.File's. The listing is os.File's own; a
// page-cache File that OpenFile did not tell apart from a regular file
// (nonregular_linux.go) then follows it: the listing moves the descriptor's
// offset, which os.File's Read and Seek use, so the File's cursor takes
// it, and its Seek becomes os.File's (which also restarts the listing).
// On a regular file these fail as os.File's do (ENOTDIR).

// ReadDir reads the directory's entries in directory order, like
// os.File.ReadDir.
func (f *File) ReadDir(n int) ([]fs.DirEntry, error) {
	var d []fs.DirEntry
	err := f.list(func(p *os.File) (err error) {
		d, err = p.ReadDir(n)
		return err
	})
	return d, err
}

// Readdir reads the directory's entries as FileInfos, like
// os.File.Readdir.
func (f *File) Readdir(n int) ([]fs.FileInfo, error) {
	var d []fs.FileInfo
	err := f.list(func(p *os.File) (err error) {
		d, err = p.Readdir(n)
		return err
	})
	return d, err
}

// Readdirnames reads the directory's entry names, like
// os.File.Readdirnames.
func (f *File) Readdirnames(n int) ([]string, error) {
	var d []string
	err := f.list(func(p *os.File) (err error) {
		d, err = p.Readdirnames(n)
		return err
	})
	return d, err
}

// list runs fn, a listing on the File's *os.File (nil for a nil File),
// and makes the cursor follow the descriptor's offset (see above).
func (f *File) list(fn func(*os.File) error) error {
	if f == nil {
		return fn(nil)
	}
	if f.plain() || f.acquire("readdirent") != nil {
		return fn(f.osf) // os.File's, closed or not
	}
	defer f.release()
	f.cur.mu.Lock()
	defer f.cur.mu.Unlock()
	err := fn(f.osf)
	if err == nil || err == io.EOF {
		f.kind.Store(kindOther) // only a directory lists
	}
	if pos, serr := sys.Seek(f.bufferedFd, 0, io.SeekCurrent); serr == nil {
		f.cur.pos.Store(pos)
	}
	return err
}

// seekOther is Seek on a File known not to be regular: os.File's, which
// forgets a listing in progress. The caller holds a reference and the cursor's lock.
func (f *File) seekOther(offset int64, whence int) (int64, error) {
	pos, err := f.osf.Seek(offset, whence)
	if err == nil {
		f.cur.pos.Store(pos)
	}
	return pos, err
}
