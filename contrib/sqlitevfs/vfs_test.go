//go:build linux

package sqlitevfs

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

const (
	accounts = 50
	balance  = 1000
)

// SQLite's own behaviour through the VFS, in both modes, journal modes
// DELETE and WAL, synchronous NORMAL and FULL: writers move money between
// accounts in transactions while readers check, in theirs, that the total
// never changes (a reader that saw half a transaction, or a writer that
// lost another's update, breaks it); then every transfer is there,
// PRAGMA integrity_check is ok, and SQLite's default VFS opens the same
// database and finds the same.
func TestSQLite(t *testing.T) {
	for _, mode := range []Mode{PageCache, Direct} {
		for _, journal := range []string{"delete", "wal"} {
			for _, syncMode := range []string{"normal", "full"} {
				t.Run(fmt.Sprintf("%s/%s/%s", mode, journal, syncMode), func(t *testing.T) {
					testSQLite(t, mode, journal, syncMode)
				})
			}
		}
	}
}

func testSQLite(t *testing.T, mode Mode, journal, syncMode string) {
	s, ops := tracedScheduler(t)
	name := registerVFS(t, Options{Mode: mode, Scheduler: s})
	path := filepath.Join(t.TempDir(), "bank.db")
	db := openSQL(t, path, name, "journal_mode("+journal+")", "synchronous("+syncMode+")")
	db.SetMaxOpenConns(8)

	setup(t, db)
	if mode == Direct {
		if direct, all := directFds(t, path); direct == 0 {
			t.Fatalf("direct mode: none of the %d descriptors of the database is O_DIRECT", all)
		}
	}
	if mode == PageCache {
		if direct, _ := directFds(t, path); direct != 0 {
			t.Fatalf("page-cache mode: %d O_DIRECT descriptors of the database", direct)
		}
	}

	const writers, readers, transfers = 4, 4, 25
	var wg sync.WaitGroup
	var done atomic.Bool
	errs := make(chan error, writers+readers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range transfers {
				if err := transfer(db, r); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		}()
	}
	var reads atomic.Int64
	var rwg sync.WaitGroup
	for range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for !done.Load() {
				if err := checkTotal(db); err != nil {
					errs <- err
					return
				}
				reads.Add(1)
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	if err := checkTotal(db); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM log`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != writers*transfers {
		t.Fatalf("%d transfers logged, want %d", n, writers*transfers)
	}
	integrityCheck(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if ops.count("fdatasync") == 0 {
		t.Fatalf("no fdatasync reached the scheduler: %v", ops)
	}
	t.Logf("%d consistent reads; scheduler requests: %v", reads.Load(), ops)

	// The same file, through SQLite's default VFS.
	other := openSQL(t, path, "")
	if err := checkTotal(other); err != nil {
		t.Fatal(err)
	}
	if err := other.QueryRow(`SELECT count(*) FROM log`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != writers*transfers {
		t.Fatalf("default VFS: %d transfers logged, want %d", n, writers*transfers)
	}
	integrityCheck(t, other)
}

func setup(t testing.TB, db *sql.DB) {
	t.Helper()
	for _, q := range []string{
		`CREATE TABLE acct (id INTEGER PRIMARY KEY, bal INTEGER NOT NULL)`,
		`CREATE TABLE log (id INTEGER PRIMARY KEY, src INTEGER, dst INTEGER, amt INTEGER, pad BLOB)`,
		fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d)
			INSERT INTO acct SELECT i, %d FROM n`, accounts, balance),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// transfer moves a random amount between two random accounts, with a log
// row padded to 300-1300 bytes, so that the database grows page by page.
func transfer(db *sql.DB, r *rand.Rand) error {
	src, dst := 1+r.IntN(accounts), 1+r.IntN(accounts)
	amt := r.IntN(100)
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE acct SET bal = bal - ? WHERE id = ?`, amt, src); err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE acct SET bal = bal + ? WHERE id = ?`, amt, dst); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO log (src, dst, amt, pad) VALUES (?, ?, ?, randomblob(?))`, src, dst, amt, 300+r.IntN(1000)); err != nil {
		return err
	}
	return tx.Commit()
}

// checkTotal reads every balance in one read transaction and checks the
// total.
func checkTotal(db *sql.DB) error {
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var total, n int
	if err := tx.QueryRow(`SELECT sum(bal), count(*) FROM acct`).Scan(&total, &n); err != nil {
		return err
	}
	if total != accounts*balance || n != accounts {
		return fmt.Errorf("read %d accounts holding %d, want %d holding %d", n, total, accounts, accounts*balance)
	}
	return nil
}
