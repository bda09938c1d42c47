//go:build linux

package sqlitevfs

import (
	"bufio"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3/vfs"
)

func init() {
	childRoles["commit"] = commitChild
}

// kill -9 in the middle of commits, under synchronous=FULL: a child
// commits transactions through the VFS and reports each committed id to
// the parent over a pipe once COMMIT has returned; the parent SIGKILLs it
// at a random moment, reopens the database (SQLite rolls back a hot
// journal or recovers the WAL), and checks that every id the child
// reported is there, that nothing is there beyond the one commit that may
// have completed unreported, and that integrity_check is ok; then the next
// child goes on from there. A process kill loses nothing the kernel
// holds, so what this proves is that nothing acknowledged stays in the
// process (no write or sync left undone) and that SQLite's recovery works
// on the files the VFS wrote.
//
// A direct database of 512-byte pages, whose writes and reads all go
// through the page cache (partpage_linux.go), is killed the same way.
func TestCrash(t *testing.T) {
	for _, mode := range []Mode{PageCache, Direct} {
		for _, journal := range []string{"delete", "wal"} {
			t.Run(mode.String()+"/"+journal, func(t *testing.T) { testCrash(t, mode, journal, 4096) })
		}
	}
	for _, journal := range []string{"delete", "wal"} {
		t.Run("direct/"+journal+"/512", func(t *testing.T) { testCrash(t, Direct, journal, 512) })
	}
}

func testCrash(t *testing.T, mode Mode, journal string, pageSize int) {
	const kills = 4
	name := registerVFS(t, Options{Mode: mode})
	path := filepath.Join(t.TempDir(), "crash.db")
	db := openSQL(t, path, name, "page_size("+strconv.Itoa(pageSize)+")", "journal_mode("+journal+")")
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, pad BLOB)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r := rand.New(rand.NewPCG(uint64(mode), uint64(len(journal))))
	acked := 0 // the highest id any child reported
	for k := range kills {
		cmd := child(t, "commit", "SQLITEVFS_DB="+path, "SQLITEVFS_MODE="+mode.String(),
			"SQLITEVFS_JOURNAL="+journal, "SQLITEVFS_SEED="+strconv.Itoa(k))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ids := make(chan int)
		go func() {
			defer close(ids)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				id, err := strconv.Atoi(sc.Text())
				if err != nil {
					t.Errorf("child wrote %q", sc.Text())
					return
				}
				ids <- id
			}
		}()
		// Let it commit a few, then kill it at a random moment.
		first := acked
		deadline := time.After(time.Duration(20+r.IntN(150)) * time.Millisecond)
	wait:
		for {
			select {
			case id, ok := <-ids:
				if !ok {
					t.Fatalf("child exited before it was killed: %v", cmd.Wait())
				}
				acked = checkNext(t, acked, id)
			case <-deadline:
				if acked-first >= 3 {
					break wait
				}
				deadline = time.After(5 * time.Millisecond)
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for id := range ids { // what it reported before it died
			acked = checkNext(t, acked, id)
		}
		if err := cmd.Wait(); err == nil {
			t.Fatal("child survived SIGKILL")
		}

		left := "nothing"
		if fi, err := os.Stat(path + "-journal"); err == nil && fi.Size() > 0 {
			left = "a hot journal"
		} else if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
			left = "a WAL"
		}

		db := openSQL(t, path, name)
		var n, maxID int
		if err := db.QueryRow(`SELECT count(*), coalesce(max(id), 0) FROM t`).Scan(&n, &maxID); err != nil {
			t.Fatal(err)
		}
		if maxID < acked {
			t.Fatalf("kill %d: the child reported commit %d, the database ends at %d", k, acked, maxID)
		}
		if maxID > acked+1 {
			t.Fatalf("kill %d: the database holds commit %d, the child reported up to %d (at most one more may be unreported)", k, maxID, acked)
		}
		if n != maxID {
			t.Fatalf("kill %d: %d rows for ids up to %d", k, n, maxID)
		}
		var bad int
		if err := db.QueryRow(`SELECT count(*) FROM t WHERE n != id * 7 OR length(pad) != 100 + id % 3000`).Scan(&bad); err != nil {
			t.Fatal(err)
		}
		if bad != 0 {
			t.Fatalf("kill %d: %d rows with wrong contents", k, bad)
		}
		integrityCheck(t, db)
		db.Close()
		acked = maxID
		t.Logf("kill %d: %d commits reported so far; the child left %s; database intact", k, acked, left)
	}
}

// checkNext checks that a child reports ids in order, one at a time.
func checkNext(t *testing.T, acked, id int) int {
	t.Helper()
	if id != acked+1 {
		t.Fatalf("child reported %d after %d", id, acked)
	}
	return id
}

// commitChild commits ids from max(id)+1 on, one per transaction (some
// transactions also rewrite older rows, so that commits change pages
// all over the file), with synchronous=FULL, and writes each id to
// stdout once its COMMIT returned. It runs until killed.
func commitChild() error {
	path, journal := os.Getenv("SQLITEVFS_DB"), os.Getenv("SQLITEVFS_JOURNAL")
	mode, err := ParseMode(os.Getenv("SQLITEVFS_MODE"))
	if err != nil {
		return err
	}
	seed, _ := strconv.Atoi(os.Getenv("SQLITEVFS_SEED"))
	vfs.Register("child", New(Options{Mode: mode}))
	db, err := sql.Open("sqlite3", URI(path, "child")+
		"&_pragma=busy_timeout(10000)&_pragma=journal_mode("+journal+")&_pragma=synchronous(full)")
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	var id int
	if err := db.QueryRow(`SELECT coalesce(max(id), 0) FROM t`).Scan(&id); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(uint64(seed), 3))
	for {
		id++
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO t VALUES (?, ?, zeroblob(?))`, id, id*7, 100+id%3000); err != nil {
			return err
		}
		if id > 10 && r.IntN(4) == 0 {
			// Rewrite a few old rows in place (same contents).
			lo := 1 + r.IntN(id-10)
			if _, err := tx.Exec(`UPDATE t SET n = id * 7, pad = zeroblob(100 + id % 3000) WHERE id BETWEEN ? AND ?`, lo, lo+5); err != nil {
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(os.Stdout, id); err != nil {
			return err
		}
	}
}
