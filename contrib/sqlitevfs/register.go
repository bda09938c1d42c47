package sqlitevfs

import (
	"errors"
	"net/url"

	"github.com/ncruces/go-sqlite3/vfs"
)

// Register makes a VFS with opts known to SQLite as name, for the "vfs"
// URI parameter (URI builds such a name) and sqlite3_open_v2's zVfs:
//
//	sqlitevfs.Register("diskio", sqlitevfs.Options{})
//	db, err := sql.Open("sqlite3", sqlitevfs.URI("app.db", "diskio"))
//
// Registering a name again replaces its VFS for the databases opened
// afterwards. The empty name and "os" are the default VFS's.
func Register(name string, opts Options) error {
	if name == "" || name == "os" {
		return errors.New(`sqlitevfs: the names "" and "os" are the default VFS's`)
	}
	if _, err := opts.Mode.MarshalText(); err != nil {
		return errors.New("sqlitevfs: unknown mode " + opts.Mode.String())
	}
	vfs.Register(name, New(opts))
	return nil
}

// URI returns the SQLite URI filename of the database at path opened
// through the VFS registered as vfsName, for sqlite3.Open and the
// database/sql driver ("file:app.db?vfs=diskio"). Further parameters
// follow with "&", such as the driver's "_pragma=journal_mode(WAL)".
func URI(path, vfsName string) string {
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: url.Values{"vfs": {vfsName}}.Encode()}
	return u.String()
}
