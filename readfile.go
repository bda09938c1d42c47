package diskio

import (
	"io/fs"
	"os"
)

// Whole-file helpers, os's, through a File.

// ReadFile reads the named file and returns its contents, like
// os.ReadFile: a nil error at end of file.
func ReadFile(name string) ([]byte, error) { return readFile(Open(name)) }

// readFile reads f, which an open returned with err, from its start to
// io.EOF, and closes it.
func readFile(f *File, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// WriteFile writes data to the named file, creating it with perm (before
// umask) or truncating it, like os.WriteFile. It does not sync: call Sync
// on a File, or SyncDir, for durability.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	return writeAndClose(f, data)
}

// writeAndClose writes data at f's cursor and closes f: the first error.
func writeAndClose(f *File, data []byte) error {
	_, err := f.Write(data)
	if err1 := f.Close(); err1 != nil && err == nil {
		err = err1
	}
	return err
}

// CreateTemp creates a new file in dir with a name made from pattern, open
// for reading and writing, like os.CreateTemp (an empty dir is
// os.TempDir; the caller removes the file).
func CreateTemp(dir, pattern string, opts ...Option) (*File, error) {
	osf, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return NewFile(osf, opts...)
}
