// Package hook keeps os.OpenFile as a value, as bbolt's Options.OpenFile
// does, and calls it.
package hook

import "os"

type options struct {
	openFile func(string, int, os.FileMode) (*os.File, error)
}

type db struct {
	file *os.File
	open func(string, int, os.FileMode) (*os.File, error)
}

func newDB(path string, o *options) (*db, error) {
	d := &db{open: o.openFile}
	if d.open == nil {
		d.open = os.OpenFile // want `the value os.OpenFile can be diskio.OpenFileFunc\(\): the file stays within`
	}
	f, err := d.open(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	d.file = f
	return d, nil
}

func (d *db) close() error { return d.file.Close() }
