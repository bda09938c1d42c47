//go:build linux

package sqlitevfs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/vfs"

	"github.com/diskio-go/diskio/sched"
)

func init() {
	childRoles["nobody"] = nobodyChild
	childRoles["holdlock"] = holdLockChild
}

// outcome is what SQLite answered to opening a database, reading it and
// writing it: 0 for success, else the extended result code.
type outcome struct {
	Open, Read, Write sqlite3.ExtendedErrorCode
}

func (o outcome) String() string {
	s := func(c sqlite3.ExtendedErrorCode) string {
		if c == 0 {
			return "ok"
		}
		return fmt.Sprintf("%d (%v)", c, c)
	}
	return fmt.Sprintf("open %s, read %s, write %s", s(o.Open), s(o.Read), s(o.Write))
}

// try opens path through vfsName ("" the default VFS) with no busy
// handler, reads table t and inserts into it.
func try(path, vfsName string) outcome {
	uri := "file:" + path
	if vfsName != "" {
		uri = URI(path, vfsName)
	}
	c, err := sqlite3.Open(uri)
	if err != nil {
		return outcome{Open: code(err)}
	}
	defer c.Close()
	return outcome{
		Read:  code(c.Exec(`SELECT count(*) FROM t`)),
		Write: code(c.Exec(`INSERT INTO t VALUES (1)`)),
	}
}

// theVFSes are this VFS in both modes and SQLite's default one, which
// every bad input must answer alike.
func theVFSes(t testing.TB) map[string]string {
	return map[string]string{
		"pagecache": registerVFS(t, Options{}),
		"direct":    registerVFS(t, Options{Mode: Direct}),
		"default":   "",
	}
}

// createDB makes a database with a table t in journal mode DELETE.
func createDB(t testing.TB, path string) {
	t.Helper()
	c, err := sqlite3.Open("file:" + path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(`PRAGMA journal_mode=delete; CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// Databases a process may not write, as a user without privileges (a
// child process that gave up root): a new database in a read-only
// directory cannot be opened (SQLITE_CANTOPEN); a writable database in a
// read-only directory reads, and a write, which needs a new journal there,
// is SQLITE_READONLY_DIRECTORY; a read-only database file opens read-only
// and a write is SQLITE_READONLY, as SQLite's unix VFS has it.
func TestReadOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make a child process of another user")
	}
	base, err := os.MkdirTemp("", "sqlitevfs-readonly")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	const nobody = 65534
	roDir := filepath.Join(base, "ro") // root's: read-only to nobody
	rwDir := filepath.Join(base, "rw") // nobody's
	for _, d := range []string{base, roDir, rwDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(rwDir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	owned := filepath.Join(roDir, "owned.db") // nobody's file in root's directory
	createDB(t, owned)
	roFile := filepath.Join(rwDir, "readonly.db") // 0444 in nobody's directory
	createDB(t, roFile)
	for _, p := range []string{owned, roFile} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(roFile, 0o444); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, path  string
		want        outcome
		wantDefault *outcome // where ncruces' default VFS differs
	}{
		{"new database in a read-only directory", filepath.Join(roDir, "new.db"), outcome{Open: sqlite3.ExtendedErrorCode(sqlite3.CANTOPEN)}, nil},
		{"database in a read-only directory", owned, outcome{Write: sqlite3.READONLY_DIRECTORY}, nil},
		// SQLite's unix VFS opens a file it may not write read-only, and
		// SQLite answers writes with SQLITE_READONLY; ncruces' default
		// VFS (v0.37.0) does not, and the open fails.
		{"read-only database file", roFile, outcome{Write: sqlite3.ExtendedErrorCode(sqlite3.READONLY)},
			&outcome{Open: sqlite3.ExtendedErrorCode(sqlite3.CANTOPEN)}},
	}
	var paths []string
	for _, c := range cases {
		paths = append(paths, c.path)
	}
	cmd := child(t, "nobody", "SQLITEVFS_PATHS="+strings.Join(paths, ":"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]outcome
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, c := range cases {
		for vfs, o := range got[i] {
			want := c.want
			if vfs == "default" && c.wantDefault != nil {
				want = *c.wantDefault
			}
			if o != want {
				t.Errorf("%s, %s VFS: %v; want %v", c.name, vfs, o, want)
			} else {
				t.Logf("%s, %s VFS: %v", c.name, vfs, o)
			}
		}
	}
}

// nobodyChild becomes user nobody and tries every path of SQLITEVFS_PATHS
// through each VFS, printing the outcomes as JSON.
func nobodyChild() error {
	const nobody = 65534
	if err := syscall.Setgroups(nil); err != nil {
		return err
	}
	if err := syscall.Setgid(nobody); err != nil {
		return err
	}
	if err := syscall.Setuid(nobody); err != nil {
		return err
	}
	vfs.Register("pagecache", New(Options{}))
	vfs.Register("direct", New(Options{Mode: Direct}))
	var all []map[string]outcome
	for _, p := range strings.Split(os.Getenv("SQLITEVFS_PATHS"), ":") {
		all = append(all, map[string]outcome{
			"pagecache": try(p, "pagecache"),
			"direct":    try(p, "direct"),
			"default":   try(p, ""),
		})
	}
	return json.NewEncoder(os.Stdout).Encode(all)
}

// Paths that are not databases: a directory (SQLITE_CANTOPEN_ISDIR), a
// directory that does not exist (SQLITE_CANTOPEN_FULLPATH: the default
// VFS's FullPathname finds no such path), a file that is not a
// database (SQLITE_NOTADB on the first read) — each VFS alike.
func TestNotADatabase(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 400)), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "subdir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	notadb := sqlite3.ExtendedErrorCode(sqlite3.NOTADB)
	cases := []struct {
		name, path string
		want       outcome
	}{
		{"a directory", sub, outcome{Open: sqlite3.CANTOPEN_ISDIR}},
		{"no such directory", filepath.Join(dir, "missing", "x.db"), outcome{Open: sqlite3.CANTOPEN_FULLPATH}},
		{"not a database", garbage, outcome{Read: notadb, Write: notadb}},
	}
	for name, v := range theVFSes(t) {
		for _, c := range cases {
			if o := try(c.path, v); o != c.want {
				t.Errorf("%s, %s VFS: %v; want %v", c.name, name, o, c.want)
			}
		}
	}
}

// A database another process holds locked: SQLITE_BUSY at once without a
// busy handler, and after the busy timeout with one (the VFS's BUSY is
// what SQLite's busy handler retries on); in WAL mode readers go on and
// a second writer is SQLITE_BUSY.
func TestLockedDatabase(t *testing.T) {
	for _, journal := range []string{"delete", "wal"} {
		t.Run(journal, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "locked.db")
			createDB(t, path)
			c, err := sqlite3.Open("file:" + path)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Exec(`PRAGMA journal_mode=` + journal); err != nil {
				t.Fatal(err)
			}
			c.Close()

			cmd := child(t, "holdlock", "SQLITEVFS_DB="+path)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer stdin.Close()
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
				t.Fatalf("child said %q, %v", line, err)
			}

			wantRead := sqlite3.ExtendedErrorCode(sqlite3.BUSY)
			if journal == "wal" {
				wantRead = 0 // a WAL reader does not wait for the writer
			}
			busy := sqlite3.ExtendedErrorCode(sqlite3.BUSY)
			for name, v := range theVFSes(t) {
				if o := try(path, v); o.Open != 0 || o.Read != wantRead || (o.Read == 0 && o.Write != busy) {
					t.Errorf("%s VFS: %v; want read %d, write SQLITE_BUSY", name, o, wantRead)
				}
				// With a busy timeout: BUSY after waiting for it.
				uri := "file:" + path
				if v != "" {
					uri = URI(path, v)
				}
				c, err := sqlite3.Open(uri)
				if err != nil {
					t.Fatal(err)
				}
				c.BusyTimeout(200 * time.Millisecond)
				start := time.Now()
				err = c.Exec(`BEGIN IMMEDIATE`)
				waited := time.Since(start)
				c.Close()
				if code(err).Code() != sqlite3.BUSY || waited < 150*time.Millisecond {
					t.Errorf("%s VFS, busy timeout 200ms: %v after %v; want SQLITE_BUSY after the timeout", name, err, waited)
				}
			}
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			// The child's transaction committed when it let go.
			if o := try(path, ""); o != (outcome{}) {
				t.Fatalf("after the child let go: %v", o)
			}
		})
	}
}

// holdLockChild holds SQLITEVFS_DB's write lock (BEGIN EXCLUSIVE and a
// write, through this VFS) until its stdin closes, then commits.
func holdLockChild() error {
	path := os.Getenv("SQLITEVFS_DB")
	vfs.Register("child", New(Options{}))
	c, err := sqlite3.Open(URI(path, "child"))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Exec(`BEGIN EXCLUSIVE; INSERT INTO t VALUES (0)`); err != nil {
		return err
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	return c.Exec(`COMMIT`)
}

// A full disk, for real: a 16 MiB ext4 filesystem on a loop device,
// filled with transactions of 64 KiB rows until SQLite answers
// SQLITE_FULL; then every committed transaction is there and
// integrity_check is ok. Each VFS, both journal modes.
func TestFullDisk(t *testing.T) {
	mnt := smallFilesystem(t, 16<<20)
	for name, v := range theVFSes(t) {
		for _, journal := range []string{"delete", "wal"} {
			t.Run(name+"/"+journal, func(t *testing.T) {
				path := filepath.Join(mnt, "full.db")
				defer func() {
					for _, s := range []string{"", "-journal", "-wal", "-shm"} {
						os.Remove(path + s)
					}
				}()
				db := openSQL(t, path, v, "journal_mode("+journal+")", "synchronous(full)")
				db.SetMaxOpenConns(1)
				if _, err := db.Exec(`CREATE TABLE big (id INTEGER PRIMARY KEY, pad BLOB)`); err != nil {
					t.Fatal(err)
				}
				committed := 0
				var err, full error
				for committed < 1000 {
					if _, err = db.Exec(`INSERT INTO big (pad) SELECT randomblob(65536) FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4)`); err != nil {
						break
					}
					committed++
				}
				if v == "" {
					// ncruces' default VFS (v0.37.0) answers ENOSPC with
					// SQLITE_IOERR_WRITE: its check for ENOSPC looks for a
					// bare errno where os.File returns a *PathError.
					t.Logf("default VFS: after %d transactions: %v", committed, err)
				} else if code(err).Code() != sqlite3.FULL {
					t.Fatalf("after %d transactions: %v; want SQLITE_FULL", committed, err)
				}
				full = err
				db.Close()
				db = openSQL(t, path, v)
				var n int
				if err := db.QueryRow(`SELECT count(*) FROM big`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 4*committed {
					t.Fatalf("%d rows after %d committed transactions of 4", n, committed)
				}
				integrityCheck(t, db)
				t.Logf("%v after %d transactions (%d MiB); all there", full, committed, committed/4)
			})
		}
	}
}

// smallFilesystem mounts a new ext4 filesystem of size bytes on a loop
// device for the test, and returns where; it skips unless the test runs
// as root with mkfs.ext4 and loop devices.
func smallFilesystem(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a loop filesystem")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(size)
	f.Close()
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("mount -o loop: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
		}
	})
	return mnt
}

// Failures injected between diskio's scheduler and the kernel
// (sched.Options.Faults): a failed fdatasync is SQLITE_IOERR_FSYNC, and
// the transaction is not committed; a write refused for lack of space
// (ENOSPC, on the direct file's writes, which go through the scheduler)
// is SQLITE_FULL. The database stays intact.
func TestInjectedFaults(t *testing.T) {
	for _, mode := range []Mode{PageCache, Direct} {
		t.Run(mode.String(), func(t *testing.T) {
			var failSync, failWrite atomic.Bool
			s, err := sched.New(sched.Options{Backend: sched.URing, Faults: sched.FaultFunc(func(a sched.Attempt) sched.Fault {
				switch {
				case a.Op == sched.OpFdatasync && failSync.Load():
					return sched.Fault{Errno: syscall.EIO}
				case a.Op == sched.OpWrite && failWrite.Load():
					return sched.Fault{Errno: syscall.ENOSPC}
				}
				return sched.Fault{}
			})})
			if err != nil {
				t.Skipf("fault injection needs io_uring: %v", err)
			}
			defer s.Close()
			v := registerVFS(t, Options{Mode: mode, Scheduler: s})
			path := filepath.Join(t.TempDir(), "faults.db")
			createDB(t, path)

			c := openConn(t, path, v)
			if err := c.Exec(`INSERT INTO t VALUES (1)`); err != nil {
				t.Fatal(err)
			}
			failSync.Store(true)
			err = c.Exec(`INSERT INTO t VALUES (2)`)
			failSync.Store(false)
			if code(err) != sqlite3.IOERR_FSYNC {
				t.Errorf("fdatasync failing with EIO: %v; want SQLITE_IOERR_FSYNC", err)
			}
			if mode == Direct {
				failWrite.Store(true)
				err = c.Exec(`BEGIN; INSERT INTO t SELECT zeroblob(20000) FROM t; COMMIT`)
				failWrite.Store(false)
				if code(err).Code() != sqlite3.FULL {
					t.Errorf("writes failing with ENOSPC: %v; want SQLITE_FULL", err)
				}
				c.Exec(`ROLLBACK`)
			}
			c.Close()

			db := openSQL(t, path, v)
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Fatalf("%d rows; want the 1 committed", n)
			}
			integrityCheck(t, db)
		})
	}
}
