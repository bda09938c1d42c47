//go:build linux

package sqlitevfs

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3/vfs"
)

func init() {
	childRoles["bank"] = bankChild
}

// Several processes on one database: children transfer money between the
// accounts concurrently (two through this VFS, in page-cache and direct
// mode, one through SQLite's default VFS), each checking the total in
// its own read transactions, while the parent reads too. In WAL mode they
// share the -shm WAL-index; in DELETE mode they take turns with the
// database locks. At the end every transfer of every process is there and
// integrity_check is ok. With 512-byte pages the direct child's requests
// all go through the page cache (partpage_linux.go), beside the other
// processes' page-cache and direct I/O.
func TestProcesses(t *testing.T) {
	for _, journal := range []string{"delete", "wal"} {
		for _, pageSize := range []int{4096, 512} {
			t.Run(journal+"/"+strconv.Itoa(pageSize), func(t *testing.T) { testProcesses(t, journal, pageSize) })
		}
	}
}

func testProcesses(t *testing.T, journal string, pageSize int) {
	name := registerVFS(t, Options{})
	path := filepath.Join(t.TempDir(), "bank.db")
	db := openSQL(t, path, name, "page_size("+strconv.Itoa(pageSize)+")", "journal_mode("+journal+")")
	setup(t, db)

	const transfers = 20
	children := []string{"pagecache", "direct", "default"}
	var wg sync.WaitGroup
	errs := make(chan error, len(children))
	for i, mode := range children {
		cmd := child(t, "bank",
			"SQLITEVFS_DB="+path,
			"SQLITEVFS_MODE="+mode,
			"SQLITEVFS_JOURNAL="+journal,
			"SQLITEVFS_N="+strconv.Itoa(transfers),
			"SQLITEVFS_SEED="+strconv.Itoa(i))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				errs <- fmt.Errorf("child %s: %w", mode, err)
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	reads := 0
	for waiting := true; waiting; {
		select {
		case <-finished:
			waiting = false
		default:
			if err := checkTotal(db); err != nil {
				t.Error(err)
				waiting = false
			}
			reads++
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM log`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(children)*transfers {
		t.Fatalf("%d transfers logged, want %d", n, len(children)*transfers)
	}
	if err := checkTotal(db); err != nil {
		t.Fatal(err)
	}
	integrityCheck(t, db)
	var got int
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&got); err != nil || got != pageSize {
		t.Fatalf("page_size %d (%v), want %d", got, err, pageSize)
	}
	t.Logf("the parent made %d consistent reads meanwhile", reads)
}

// bankChild makes SQLITEVFS_N transfers on SQLITEVFS_DB through the VFS
// of SQLITEVFS_MODE (pagecache, direct, or default: SQLite's own), and
// checks the total after each.
func bankChild() error {
	path, journal := os.Getenv("SQLITEVFS_DB"), os.Getenv("SQLITEVFS_JOURNAL")
	n, _ := strconv.Atoi(os.Getenv("SQLITEVFS_N"))
	seed, _ := strconv.Atoi(os.Getenv("SQLITEVFS_SEED"))
	dsn := "file:" + path + "?"
	if m := os.Getenv("SQLITEVFS_MODE"); m != "default" {
		mode, err := ParseMode(m)
		if err != nil {
			return err
		}
		vfs.Register("child", New(Options{Mode: mode}))
		dsn = URI(path, "child") + "&"
	}
	db, err := sql.Open("sqlite3", dsn+"_pragma=busy_timeout(20000)&_pragma=journal_mode("+journal+")")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(2)
	r := rand.New(rand.NewPCG(uint64(seed), 2))
	for i := range n {
		if err := transfer(db, r); err != nil {
			return fmt.Errorf("transfer %d: %w", i, err)
		}
		if err := checkTotal(db); err != nil {
			return err
		}
		time.Sleep(time.Duration(r.IntN(2000)) * time.Microsecond)
	}
	return errors.Join(db.Close())
}
