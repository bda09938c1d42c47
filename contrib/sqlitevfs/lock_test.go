//go:build linux

package sqlitevfs

import (
	"path/filepath"
	"testing"

	"github.com/ncruces/go-sqlite3"
)

// The database locks exclude exactly as SQLite's own protocol says, between
// two connections through this VFS and between this VFS and SQLite's
// default one (the same bytes, the same kind of lock), in both directions:
// RESERVED lets readers in and other writers not, a writer waiting on a
// reader holds PENDING and turns new readers away, EXCLUSIVE turns
// everyone away, and all of it is gone once the holder commits.
func TestLocking(t *testing.T) {
	ours := registerVFS(t, Options{})
	direct := registerVFS(t, Options{Mode: Direct})
	for _, c := range []struct{ name, a, b string }{
		{"ours-ours", ours, ours},
		{"ours-direct", ours, direct},
		{"ours-default", ours, ""},
		{"default-ours", "", ours},
	} {
		t.Run(c.name, func(t *testing.T) { testLocking(t, c.a, c.b) })
	}
}

func testLocking(t *testing.T, vfsA, vfsB string) {
	path := filepath.Join(t.TempDir(), "locks.db")
	a := openConn(t, path, vfsA)
	run(t, a, `PRAGMA journal_mode=delete; CREATE TABLE t (x); INSERT INTO t VALUES (1)`)
	b := openConn(t, path, vfsB)
	c := openConn(t, path, vfsB)

	// RESERVED: readers yes, a second writer no.
	run(t, a, `BEGIN IMMEDIATE`)
	run(t, b, `SELECT count(*) FROM t`)
	wantBusy(t, b, `BEGIN IMMEDIATE`)

	// A reader in a transaction keeps SHARED; the writer's commit needs
	// EXCLUSIVE, gets BUSY and keeps PENDING, which turns a new reader
	// away while the old one may go on.
	run(t, b, `BEGIN; SELECT count(*) FROM t`)
	run(t, a, `INSERT INTO t VALUES (2)`)
	wantBusy(t, a, `COMMIT`)
	wantBusy(t, c, `SELECT count(*) FROM t`)
	run(t, b, `SELECT count(*) FROM t; COMMIT`)
	run(t, a, `COMMIT`)
	if n := count(t, c); n != 2 {
		t.Fatalf("after commit: %d rows, want 2", n)
	}

	// EXCLUSIVE: nobody else, neither readers nor writers.
	run(t, a, `BEGIN EXCLUSIVE`)
	wantBusy(t, b, `SELECT count(*) FROM t`)
	wantBusy(t, c, `BEGIN IMMEDIATE`)
	run(t, a, `INSERT INTO t VALUES (3); COMMIT`)
	if n := count(t, b); n != 3 {
		t.Fatalf("after the exclusive transaction: %d rows, want 3", n)
	}

	// The other way round.
	run(t, b, `BEGIN IMMEDIATE`)
	wantBusy(t, a, `BEGIN IMMEDIATE`)
	run(t, a, `SELECT count(*) FROM t`)
	run(t, b, `INSERT INTO t VALUES (4); COMMIT`)
	run(t, a, `BEGIN IMMEDIATE; INSERT INTO t VALUES (5); COMMIT`)
	if n := count(t, c); n != 5 {
		t.Fatalf("%d rows, want 5", n)
	}
}

func run(t *testing.T, c *sqlite3.Conn, sql string) {
	t.Helper()
	if err := c.Exec(sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func wantBusy(t *testing.T, c *sqlite3.Conn, sql string) {
	t.Helper()
	err := c.Exec(sql)
	if code(err).Code() != sqlite3.BUSY {
		t.Fatalf("%s: got %v, want SQLITE_BUSY", sql, err)
	}
}

func count(t *testing.T, c *sqlite3.Conn) int {
	t.Helper()
	stmt, _, err := c.Prepare(`SELECT count(*) FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	if !stmt.Step() {
		t.Fatal(stmt.Err())
	}
	return stmt.ColumnInt(0)
}
