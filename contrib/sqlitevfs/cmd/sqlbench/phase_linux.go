//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"
	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/contrib/sqlitevfs"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

// result is one phase's measurement, handed from the child to the parent.
type result struct {
	Cell      string
	VFS       string
	Round     int
	Ops       int64
	OpsPerSec float64
	P50, P99  float64 // µs
	CPUPerOp  float64 // µs
	Threads   int     // peak OS threads, io_uring's workers included
	Workers   int     // peak io_uring workers
}

// parseVFS returns the sqlitevfs mode of a -vfs name, or ok false for
// "default" (ncruces' own VFS).
func parseVFS(name string) (mode diskio.DirectMode, err error) {
	if name == "default" {
		return -1, nil
	}
	err = mode.UnmarshalText([]byte(name))
	return mode, err
}

func readDBPath(c config) string { return filepath.Join(c.dir, "sqlbench", "read.db") }

func dbPath(c config, cell, vfs string) string {
	return filepath.Join(c.dir, "sqlbench", cell+"-"+vfs+".db")
}

func removeDB(path string) {
	for _, s := range []string{"", "-journal", "-wal", "-shm"} {
		os.Remove(path + s)
	}
}

// value fills b with bytes derived from id (the same for every run), so
// that a read can check what it got.
func value(b []byte, id int64) []byte {
	r := bench.NewRand(uint64(id))
	for i := 0; i < len(b); i += 8 {
		x := r.Next()
		for j := i; j < min(i+8, len(b)); j++ {
			b[j] = byte(x)
			x >>= 8
		}
	}
	return b
}

// open opens path through vfsName ("" for the default VFS) with a busy
// timeout and the given journal mode and synchronous setting.
func open(c config, path, vfsName, journal, synchronous string) (*sqlite3.Conn, error) {
	uri := "file:" + path
	if vfsName != "" {
		uri = sqlitevfs.URI(path, vfsName)
	}
	conn, err := sqlite3.Open(uri)
	if err != nil {
		return nil, err
	}
	q := fmt.Sprintf(`PRAGMA busy_timeout=10000; PRAGMA journal_mode=%s; PRAGMA synchronous=%s`, journal, synchronous)
	if c.cacheSize != 0 {
		q += fmt.Sprintf(`; PRAGMA cache_size=%d`, c.cacheSize)
	}
	if err := conn.Exec(q); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// makeReadDB makes the database of the read cells with the default VFS
// (the file is the same whichever VFS writes it), unless the one in place
// already has c.rows rows of c.value bytes.
func makeReadDB(c config, path string) error {
	if conn, err := sqlite3.Open("file:" + path + "?mode=ro"); err == nil {
		stmt, _, err := conn.Prepare(`SELECT rows, value FROM meta`)
		ok := err == nil && stmt.Step() && stmt.ColumnInt(0) == c.rows && stmt.ColumnInt(1) == c.value
		if stmt != nil {
			stmt.Close()
		}
		conn.Close()
		if ok {
			return nil
		}
	}
	removeDB(path)
	fmt.Fprintf(os.Stderr, "making %s: %d rows of %d B\n", path, c.rows, c.value)
	conn, err := open(c, path, "", "wal", "off")
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Exec(`CREATE TABLE kv (id INTEGER PRIMARY KEY, v BLOB)`); err != nil {
		return err
	}
	if err := insertRows(conn, c, c.rows, 100_000, nil); err != nil {
		return err
	}
	return conn.Exec(fmt.Sprintf(`CREATE TABLE meta (rows, value); INSERT INTO meta VALUES (%d, %d); PRAGMA wal_checkpoint(TRUNCATE)`, c.rows, c.value))
}

// insertRows inserts rows 1..n into kv, batch rows per transaction,
// recording each transaction's time in h (if set).
func insertRows(conn *sqlite3.Conn, c config, n, batch int, h *bench.Histogram) error {
	stmt, _, err := conn.Prepare(`INSERT INTO kv VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	buf := make([]byte, c.value)
	for id := 1; id <= n; {
		t0 := time.Now()
		if err := conn.Exec(`BEGIN`); err != nil {
			return err
		}
		for end := min(id+batch, n+1); id < end; id++ {
			stmt.BindInt64(1, int64(id))
			stmt.BindBlob(2, value(buf, int64(id)))
			if err := stmt.Exec(); err != nil {
				return err
			}
		}
		if err := conn.Exec(`COMMIT`); err != nil {
			return err
		}
		if h != nil {
			h.Record(time.Since(t0))
		}
	}
	return nil
}

// prepare readies the files of a phase, in the parent (so that the
// child's threads and CPU are the phase's alone): fresh databases for the
// writing cells, the read database evicted from the page cache (cold,
// scan) or read into it (warm, scanwarm), a copy for the mix (which leaves
// it in the page cache).
//
// It first writes back every dirty page of the system (sync(2)), so that
// the write-back of the phase before does not run during this one.
func prepare(c config, cell, vfs string) error {
	read := readDBPath(c)
	defer unix.Sync()
	switch cell {
	case "load", "commit", "commitjournal":
		removeDB(dbPath(c, cell, vfs))
	case "cold", "scan":
		return bench.Evict(read)
	case "warm", "scanwarm":
		return bench.Warm(read, fileSize(read))
	case "mix":
		dst := dbPath(c, cell, vfs)
		removeDB(dst)
		return copyFile(dst, read)
	}
	return nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// runChild runs one phase, CELL/VFS, and prints its result.
func runChild(c config) error {
	cell, vfs, _ := cut(c.child)
	mode, err := parseVFS(vfs)
	if err != nil {
		return err
	}
	vfsName := ""
	var rec *trace.Recorder
	if mode >= 0 {
		opts := sqlitevfs.Options{Mode: mode}
		if c.trace != "" {
			rec = trace.New(trace.Config{Records: 1 << 20, StackEvery: 1, Stacks: 1 << 16})
			so, err := sched.OptionsFromEnv() // as the default scheduler it replaces
			if err != nil {
				return err
			}
			so.Tracer = rec
			s, err := sched.New(so)
			if err != nil {
				return err
			}
			defer s.Close()
			opts.Scheduler = s
		}
		vfsName = "bench"
		if err := sqlitevfs.Register(vfsName, opts); err != nil {
			return err
		}
	}
	p := phase{c: c, cell: cell, vfs: vfsName}
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile + "-" + cell + "-" + vfs + ".cpu.pprof")
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var r result
	switch cell {
	case "load":
		r, err = p.load()
	case "commit":
		r, err = p.commit(c.journal)
	case "commitjournal":
		r, err = p.commit("delete")
	case "cold":
		r, err = p.pointReads(c.readers, c.coldReads, 0)
	case "warm":
		r, err = p.pointReads(c.readers, 0, 0)
	case "mix":
		r, err = p.pointReads(c.mixers, 0, c.updatePct)
	case "scan":
		r, err = p.scan(0)
	case "scanwarm":
		r, err = p.scan(c.duration)
	default:
		err = fmt.Errorf("unknown cell %q", cell)
	}
	if err != nil {
		return err
	}
	if rec != nil {
		name := c.trace + "-" + cell + "-" + vfs
		if err := rec.Snapshot().WriteFiles(name); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s/%s: I/O-wait profile in %s%s\n", cell, vfs, name, trace.SuffixWait)
	}
	r.Cell, r.VFS = cell, vfs
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Printf("RESULT %s\n", b)
	return nil
}

func cut(s string) (a, b string, ok bool) {
	for i := range len(s) {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// phase is one cell on one VFS, in the child process.
type phase struct {
	c    config
	cell string
	vfs  string // registered name, "" for the default VFS
}

func (p phase) result(ops int64, u bench.Usage, h *bench.Histogram) result {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return result{
		Ops:       ops,
		OpsPerSec: float64(ops) / u.Elapsed.Seconds(),
		P50:       us(h.Quantile(0.5)),
		P99:       us(h.Quantile(0.99)),
		CPUPerOp:  us(u.CPU) / float64(max(ops, 1)),
		Threads:   u.PeakThreads,
		Workers:   u.PeakWorkers,
	}
}

// load inserts c.loadRows rows in transactions of c.loadBatch into a new
// database, and closes it (its final checkpoint included). An op is a
// row; the latencies are the transactions'.
func (p phase) load() (result, error) {
	conn, err := open(p.c, dbPath(p.c, p.cell, p.vfsLabel()), p.vfs, p.c.journal, "normal")
	if err != nil {
		return result{}, err
	}
	if err := conn.Exec(`CREATE TABLE kv (id INTEGER PRIMARY KEY, v BLOB)`); err != nil {
		return result{}, err
	}
	var h bench.Histogram
	m := bench.StartMeter()
	if err := insertRows(conn, p.c, p.c.loadRows, p.c.loadBatch, &h); err != nil {
		return result{}, err
	}
	if err := conn.Close(); err != nil {
		return result{}, err
	}
	return p.result(int64(p.c.loadRows), m.Stop(), &h), nil
}

// vfsLabel is the -vfs name of the phase's VFS, for file names.
func (p phase) vfsLabel() string {
	_, v, _ := cut(p.c.child)
	return v
}

// commit inserts one row per transaction, each a synced commit
// (synchronous=FULL), from one connection, for c.duration.
func (p phase) commit(journal string) (result, error) {
	conn, err := open(p.c, dbPath(p.c, p.cell, p.vfsLabel()), p.vfs, journal, "full")
	if err != nil {
		return result{}, err
	}
	defer conn.Close()
	if err := conn.Exec(`CREATE TABLE c (id INTEGER PRIMARY KEY, v BLOB)`); err != nil {
		return result{}, err
	}
	stmt, _, err := conn.Prepare(`INSERT INTO c (v) VALUES (?)`)
	if err != nil {
		return result{}, err
	}
	defer stmt.Close()
	buf := make([]byte, p.c.value)
	var h bench.Histogram
	var ops int64
	m := bench.StartMeter()
	for end := time.Now().Add(p.c.duration); time.Now().Before(end); ops++ {
		t0 := time.Now()
		stmt.BindBlob(1, value(buf, ops))
		if err := stmt.Exec(); err != nil {
			return result{}, err
		}
		h.Record(time.Since(t0))
	}
	return p.result(ops, m.Stop(), &h), nil
}

// pointReads runs conns connections on the read database (the mix on its
// copy), each reading rows by random id: reads per connection, or for
// c.duration when reads is 0; updatePct percent of the operations update
// a row instead (autocommit, synchronous=NORMAL).
func (p phase) pointReads(conns, reads, updatePct int) (result, error) {
	path := readDBPath(p.c)
	if updatePct > 0 {
		path = dbPath(p.c, p.cell, p.vfsLabel())
	}
	type worker struct {
		conn     *sqlite3.Conn
		sel, upd *sqlite3.Stmt
	}
	ws := make([]worker, conns)
	defer func() {
		for _, w := range ws {
			for _, s := range []*sqlite3.Stmt{w.sel, w.upd} {
				if s != nil {
					s.Close()
				}
			}
			if w.conn != nil {
				w.conn.Close()
			}
		}
	}()
	for i := range ws {
		conn, err := open(p.c, path, p.vfs, p.c.journal, "normal")
		if err != nil {
			return result{}, err
		}
		ws[i].conn = conn
		if ws[i].sel, _, err = conn.Prepare(`SELECT v FROM kv WHERE id = ?`); err != nil {
			return result{}, err
		}
		if ws[i].upd, _, err = conn.Prepare(`UPDATE kv SET v = ? WHERE id = ?`); err != nil {
			return result{}, err
		}
	}
	var h bench.Histogram
	var ops atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	start := make(chan struct{})
	deadline := time.Now().Add(time.Hour)
	for i := range ws {
		w := ws[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			want := make([]byte, p.c.value)
			<-start
			for n := 0; reads == 0 || n < reads; n++ {
				if reads == 0 && n%16 == 0 && time.Now().After(deadline) {
					break
				}
				id := 1 + r.Int64N(int64(p.c.rows))
				t0 := time.Now()
				if updatePct > 0 && r.IntN(100) < updatePct {
					w.upd.BindBlob(1, value(want, id^0x5a5a))
					w.upd.BindInt64(2, id)
					if err := w.upd.Exec(); err != nil {
						errs <- err
						return
					}
				} else {
					w.sel.BindInt64(1, id)
					if !w.sel.Step() {
						errs <- fmt.Errorf("row %d: %v", id, w.sel.Err())
						return
					}
					got := w.sel.ColumnRawBlob(0)
					if len(got) != p.c.value || (updatePct == 0 && string(got) != string(value(want, id))) {
						errs <- fmt.Errorf("row %d: %d bytes, not its value", id, len(got))
						return
					}
					if err := w.sel.Reset(); err != nil {
						errs <- err
						return
					}
				}
				h.Record(time.Since(t0))
				ops.Add(1)
			}
		}()
	}
	m := bench.StartMeter()
	deadline = time.Now().Add(p.c.duration)
	close(start)
	wg.Wait()
	u := m.Stop()
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	return p.result(ops.Load(), u, &h), nil
}

// scan reads every row's value once, from one connection; an op is a row,
// the latency the whole scan's.
// scan reads the whole table, again and again until d has passed (at
// least once): a single scan of the warm database lasts half a second,
// too short a sample on a shared machine (one scan per round moved the
// ratio between rounds by ±20%).
func (p phase) scan(d time.Duration) (result, error) {
	conn, err := open(p.c, readDBPath(p.c), p.vfs, p.c.journal, "normal")
	if err != nil {
		return result{}, err
	}
	defer conn.Close()
	stmt, _, err := conn.Prepare(`SELECT v FROM kv`)
	if err != nil {
		return result{}, err
	}
	defer stmt.Close()
	var h bench.Histogram
	var total int64
	m := bench.StartMeter()
	start := time.Now()
	for {
		var rows, bytes int64
		t0 := time.Now()
		for stmt.Step() {
			rows++
			bytes += int64(len(stmt.ColumnRawBlob(0)))
		}
		if err := stmt.Err(); err != nil {
			return result{}, err
		}
		h.Record(time.Since(t0))
		if rows != int64(p.c.rows) || bytes != rows*int64(p.c.value) {
			return result{}, fmt.Errorf("scanned %d rows, %d bytes", rows, bytes)
		}
		total += rows
		if time.Since(start) >= d {
			break
		}
		if err := stmt.Reset(); err != nil {
			return result{}, err
		}
	}
	u := m.Stop()
	return p.result(total, u, &h), nil
}
