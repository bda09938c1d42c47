//go:build linux

package sqlitevfs

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ncruces/go-sqlite3"
	_ "github.com/ncruces/go-sqlite3/driver"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/sched"
)

// opCounter is a sched.Tracer counting the requests that reached the
// scheduler, by kind, and the bytes they moved; page-cache attempts on
// the caller (RWF_NOWAIT) are counted apart.
type opCounter struct {
	n      [16]atomic.Int64
	bytes  [16]atomic.Int64
	nowait atomic.Int64
}

func (c *opCounter) SyscallDone(sched.SyscallEvent) {}
func (c *opCounter) RequestDone(ev sched.RequestEvent) {
	if ev.Nowait {
		c.nowait.Add(1)
		return
	}
	if int(ev.Op) < len(c.n) {
		c.n[ev.Op].Add(1)
		c.bytes[ev.Op].Add(int64(ev.N))
	}
}

// count returns the requests of the kind whose name (sched.Op's String)
// is op.
func (c *opCounter) count(op string) int64 {
	for i := range c.n {
		if sched.Op(i).String() == op {
			return c.n[i].Load()
		}
	}
	panic("no op " + op)
}

func (c *opCounter) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "page-cache attempts %d; ", c.nowait.Load())
	for i := range c.n {
		if n := c.n[i].Load(); n > 0 {
			fmt.Fprintf(&b, "%s %d (%d B) ", sched.Op(i), n, c.bytes[i].Load())
		}
	}
	return b.String()
}

var vfsNames atomic.Int64

// registerVFS registers a VFS with opts under a fresh name, unregistered
// at cleanup, and returns the name.
func registerVFS(t testing.TB, opts Options) string {
	t.Helper()
	name := "diskio-test-" + strconv.FormatInt(vfsNames.Add(1), 10)
	if err := Register(name, opts); err != nil {
		t.Fatal(err)
	}
	return name
}

// tracedScheduler returns a scheduler of the test's own counting its
// requests, closed at cleanup.
func tracedScheduler(t testing.TB) (*sched.Scheduler, *opCounter) {
	t.Helper()
	var ops opCounter
	s, err := sched.New(sched.Options{Tracer: &ops})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, &ops
}

// openSQL opens path through database/sql with the VFS named vfsName
// ("" is the default VFS) and the given pragmas, closed at cleanup.
func openSQL(t testing.TB, path, vfsName string, pragmas ...string) *sql.DB {
	t.Helper()
	dsn := "file:" + path + "?"
	if vfsName != "" {
		dsn = URI(path, vfsName) + "&"
	}
	dsn += "_pragma=busy_timeout(10000)"
	for _, p := range pragmas {
		dsn += "&_pragma=" + p
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openConn opens path with the sqlite3 package directly (one connection,
// no busy handler: a lock held elsewhere is SQLITE_BUSY at once).
func openConn(t testing.TB, path, vfsName string) *sqlite3.Conn {
	t.Helper()
	uri := "file:" + path
	if vfsName != "" {
		uri = URI(path, vfsName)
	}
	c, err := sqlite3.Open(uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// integrityCheck runs PRAGMA integrity_check and fails the test unless
// SQLite answers "ok".
func integrityCheck(t testing.TB, db *sql.DB) {
	t.Helper()
	rows, err := db.Query(`PRAGMA integrity_check`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0] != "ok" {
		t.Fatalf("integrity_check: %q", lines)
	}
}

// code returns the SQLite extended result code of err, or 0 if err is not
// a SQLite error.
func code(err error) sqlite3.ExtendedErrorCode {
	var e *sqlite3.Error
	if errors.As(err, &e) {
		return e.ExtendedCode()
	}
	var x sqlite3.ExtendedErrorCode
	if errors.As(err, &x) {
		return x
	}
	var c sqlite3.ErrorCode
	if errors.As(err, &c) {
		return sqlite3.ExtendedErrorCode(c)
	}
	return 0
}

// directFds counts the process's descriptors of path that are open
// O_DIRECT (from /proc/self/fdinfo): diskio's second descriptor of a
// direct File.
func directFds(t testing.TB, path string) (direct, all int) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil || target != path {
			continue
		}
		all++
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", e.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				flags, _ := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
				if flags&unix.O_DIRECT != 0 {
					direct++
				}
			}
		}
	}
	return direct, all
}
