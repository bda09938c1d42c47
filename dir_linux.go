//go:build linux

package diskio

import (
	"io/fs"
	"os"
)

// Directory listing, like os.File's. A directory opened with Open is a
// plain File (plain_linux.go), so these are os.File's own; on a regular
// file they fail as os.File's do (ENOTDIR).

// ReadDir reads the directory's entries in directory order, like
// os.File.ReadDir.
func (f *File) ReadDir(n int) ([]fs.DirEntry, error) {
	var d []fs.DirEntry
	err := f.viaOS("readdirent", func(p *os.File) (err error) {
		d, err = p.ReadDir(n)
		return err
	})
	return d, err
}

// Readdir reads the directory's entries as FileInfos, like
// os.File.Readdir.
func (f *File) Readdir(n int) ([]fs.FileInfo, error) {
	var d []fs.FileInfo
	err := f.viaOS("readdirent", func(p *os.File) (err error) {
		d, err = p.Readdir(n)
		return err
	})
	return d, err
}

// Readdirnames reads the directory's entry names, like
// os.File.Readdirnames.
func (f *File) Readdirnames(n int) ([]string, error) {
	var d []string
	err := f.viaOS("readdirent", func(p *os.File) (err error) {
		d, err = p.Readdirnames(n)
		return err
	})
	return d, err
}
