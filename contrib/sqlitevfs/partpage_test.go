//go:build linux

package sqlitevfs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/sched"
)

// fdRequests is a sched.Tracer counting the reads and writes of each
// descriptor, smaller than 4096 bytes and not.
type fdRequests struct {
	mu           sync.Mutex
	small, whole map[int32]int
}

func (r *fdRequests) SyscallDone(sched.SyscallEvent) {}
func (r *fdRequests) RequestDone(ev sched.RequestEvent) {
	if ev.Op != sched.OpRead && ev.Op != sched.OpWrite {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Len < os.Getpagesize() {
		r.small[ev.Fd]++
	} else {
		r.whole[ev.Fd]++
	}
}

// on returns the requests counted on the descriptors fds: smaller than
// a page of the page cache, and not.
func (r *fdRequests) on(fds []int32) (small, whole int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, fd := range fds {
		small += r.small[fd]
		whole += r.whole[fd]
	}
	return small, whole
}

// directFdsOf returns the process's O_DIRECT descriptors of path.
func directFdsOf(t *testing.T, path string) []int32 {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var fds []int32
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err != nil || target != path {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", e.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				fl, _ := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
				if fl&unix.O_DIRECT != 0 {
					fd, _ := strconv.Atoi(e.Name())
					fds = append(fds, int32(fd))
				}
			}
		}
	}
	return fds
}

// mptest's crash02 transaction (PRAGMA cache_size=10, overflow chains
// written and freed) on a direct database: with pages smaller than the
// page cache's, no request reaches the O_DIRECT descriptor, which before
// made every one of the transaction's 200,000 page reads a device read;
// with 4096-byte pages every page is still read and written O_DIRECT.
// The data is right either way.
func TestDirectSmallPages(t *testing.T) {
	for _, pageSize := range []int{512, 1024, 2048, 4096, 8192} {
		t.Run(strconv.Itoa(pageSize), func(t *testing.T) {
			reqs := &fdRequests{small: map[int32]int{}, whole: map[int32]int{}}
			s, err := sched.New(sched.Options{Tracer: reqs})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			name := registerVFS(t, Options{Mode: Direct, Scheduler: s})
			path := filepath.Join(t.TempDir(), "small.db")
			c := openConn(t, path, name)
			for _, q := range []string{
				`PRAGMA page_size=` + strconv.Itoa(pageSize),
				`CREATE TABLE t(a INTEGER PRIMARY KEY, b)`,
				`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 64)
					INSERT INTO t SELECT i, randomblob(1500) FROM n`,
				`PRAGMA cache_size=10`,
				`BEGIN`,
				`UPDATE t SET b=randomblob(20000)`,
				`UPDATE t SET b=NULL WHERE a%2 = 0`,
				`COMMIT`,
			} {
				if err := c.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			fds := directFdsOf(t, path)
			if len(fds) == 0 {
				t.Fatal("the database is not open O_DIRECT")
			}
			small, whole := reqs.on(fds)
			t.Logf("O_DIRECT requests: %d smaller than %d bytes, %d not", small, os.Getpagesize(), whole)
			if small != 0 {
				t.Errorf("%d requests smaller than a page of the page cache went O_DIRECT", small)
			}
			if pageSize >= os.Getpagesize() && whole == 0 {
				t.Errorf("no page of a %d-byte-page database was read or written O_DIRECT", pageSize)
			}

			stmt, _, err := c.Prepare(`SELECT count(*), count(b), sum(length(b)) FROM t`)
			if err != nil {
				t.Fatal(err)
			}
			defer stmt.Close()
			if !stmt.Step() {
				t.Fatal(stmt.Err())
			}
			if n, nb, sum := stmt.ColumnInt(0), stmt.ColumnInt(1), stmt.ColumnInt(2); n != 64 || nb != 32 || sum != 32*20000 {
				t.Errorf("count, count(b), sum(length(b)) = %d, %d, %d; want 64, 32, %d", n, nb, sum, 32*20000)
			}
			stmt.Close()
			if err := c.Exec(`PRAGMA integrity_check`); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkSmallCache times mptest's crash02 transaction (five tables of
// 64 rows, PRAGMA cache_size=10: every row's value made a 20,000-byte
// overflow chain, then freed; rolled back untimed) on the default VFS and
// in both modes, at 512- and 4096-byte pages. With -count N the rounds
// alternate. The measurements in docs/2026-11-28-suites.md:
//
//	go test -run '^$' -bench SmallCache -benchtime 3x -count 5 .
func BenchmarkSmallCache(b *testing.B) {
	for _, pageSize := range []int{512, 4096} {
		for _, vfsName := range []string{"default", "pagecache", "direct"} {
			b.Run(strconv.Itoa(pageSize)+"/"+vfsName, func(b *testing.B) {
				name := ""
				if vfsName != "default" {
					mode, err := ParseMode(vfsName)
					if err != nil {
						b.Fatal(err)
					}
					name = registerVFS(b, Options{Mode: mode})
				}
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					path := filepath.Join(b.TempDir(), "crash02-"+strconv.Itoa(i)+".db")
					c := openConn(b, path, name)
					exec := func(q string) {
						if err := c.Exec(q); err != nil {
							b.Fatalf("%s: %v", q, err)
						}
					}
					exec(`PRAGMA page_size=` + strconv.Itoa(pageSize))
					for k := 1; k <= 5; k++ {
						t := "t" + strconv.Itoa(k)
						exec(`CREATE TABLE ` + t + `(a INTEGER PRIMARY KEY, b)`)
						exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 64)
							INSERT INTO ` + t + ` SELECT i, randomblob(1500) FROM n`)
						exec(`UPDATE ` + t + ` SET b='x'||a||'y'`)
						exec(`CREATE INDEX ` + t + `b ON ` + t + `(b)`)
					}
					exec(`PRAGMA cache_size=10`)
					b.StartTimer()
					exec(`BEGIN`)
					for k := 1; k <= 5; k++ {
						exec(`UPDATE t` + strconv.Itoa(k) + ` SET b=randomblob(20000)`)
					}
					for k := 1; k <= 5; k++ {
						exec(`UPDATE t` + strconv.Itoa(k) + ` SET b=NULL`)
					}
					b.StopTimer()
					exec(`ROLLBACK`)
					c.Close()
					b.StartTimer()
				}
			})
		}
	}
}
