//go:build linux

package sqlitevfs_test

import (
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"

	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/diskio-go/diskio/contrib/sqlitevfs"
)

// SQLite through database/sql on diskio: register the VFS once under a
// name, and open databases with that name as the "vfs" URI parameter.
func Example() {
	dir, err := os.MkdirTemp("", "sqlitevfs-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	if err := sqlitevfs.Register("diskio", sqlitevfs.Options{}); err != nil {
		log.Fatal(err)
	}
	db, err := sql.Open("sqlite3", sqlitevfs.URI(filepath.Join(dir, "app.db"), "diskio")+
		"&_pragma=journal_mode(wal)&_pragma=synchronous(normal)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	if _, err := db.Exec(`CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)`); err != nil {
		log.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO kv VALUES ('hello', 'disk')`); err != nil {
		log.Fatal(err)
	}
	var v string
	if err := db.QueryRow(`SELECT v FROM kv WHERE k = 'hello'`).Scan(&v); err != nil {
		log.Fatal(err)
	}
	fmt.Println("hello", v)
	// Output: hello disk
}
