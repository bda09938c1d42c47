package powercut

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/diskio-go/diskio"
)

// A scenario is what a writer does (write, in the child) and how the
// state after a cut is checked against what it acknowledged (check, in
// the test). check returns an error for a state no cut can produce (a
// record that was never written, a file the writer never made).
type scenario struct {
	write func(w *writer) error
	check func(dir string, ev *events) (tally, error)
}

// tally is one or more cuts' count: operations acknowledged, those of
// them missing after the cut, and records found torn (and detected by
// their checksum; never an acknowledged one, which would count as lost).
type tally struct {
	cuts, acked, lost, torn int
}

func (t *tally) add(o tally) {
	t.cuts += o.cuts
	t.acked += o.acked
	t.lost += o.lost
	t.torn += o.torn
}

var scenarios = map[string]scenario{
	"wal-sync":           {write: writeWAL(false), check: checkLogs("wal")},
	"wal-datasync":       {write: writeWAL(true), check: checkLogs("wal")},
	"wal-writeatdsync":   {write: writeWALDSync, check: checkLogs("wal")},
	"group-commit":       {write: writeGroup, check: checkGroup},
	"many-tenants":       {write: writeTenants, check: checkLogs(tenantNames()...)},
	"preallocated-table": {write: writeTable, check: checkTable},
	"rename-syncdir":     {write: writeRenames, check: checkRenames},
}

func (w *writer) rng(i uint64) *rand.Rand { return rand.New(rand.NewPCG(w.seed, i)) }

// writeWAL appends records to one log, each acknowledged after Sync (or
// Datasync).
func writeWAL(data bool) func(w *writer) error {
	return func(w *writer) error {
		fs, err := w.createDurable(os.O_WRONLY|os.O_APPEND, "wal")
		if err != nil {
			return err
		}
		f := fs[0]
		w.say("R")
		flush := func() error { return w.sync(f) }
		if data {
			flush = func() error { return w.datasync(f) }
		}
		return w.writeLog(f, 0, w.rng(0), flush)
	}
}

// writeWALDSync appends records with WriteAtDSync, each acknowledged when
// it returns: no sync of its own.
func writeWALDSync(w *writer) error {
	fs, err := w.createDurable(os.O_WRONLY, "wal")
	if err != nil {
		return err
	}
	f := fs[0]
	w.say("R")
	r := w.rng(0)
	var off int64
	for seq := uint64(1); ; seq++ {
		rec := record(0, seq, size(r))
		if w.noSync {
			_, err = f.WriteAt(rec, off)
		} else {
			_, err = f.WriteAtDSync(rec, off)
		}
		if err != nil {
			return err
		}
		off += int64(len(rec))
		w.ack("0 %d", seq)
	}
}

const groupWriters = 16

// writeGroup is group commit: 16 goroutines each write a record at the
// next free place of one file and Sync it; each record is acknowledged
// after its writer's Sync.
func writeGroup(w *writer) error {
	fs, err := w.createDurable(os.O_RDWR, "log")
	if err != nil {
		return err
	}
	f := fs[0]
	w.say("R")
	var next atomic.Int64
	return goroutines(groupWriters, func(int) error {
		for {
			i := next.Add(1) - 1
			if _, err := f.WriteAt(record(0, uint64(i), groupStride), i*groupStride); err != nil {
				return err
			}
			if err := w.sync(f); err != nil {
				return err
			}
			w.ack("%d", i)
		}
	})
}

const tenants = 64

func tenantNames() []string {
	n := make([]string, tenants)
	for i := range n {
		n[i] = fmt.Sprintf("t%02d", i)
	}
	return n
}

// writeTenants is many tenants' logs: 64 goroutines, each appending to a
// file of its own and syncing it.
func writeTenants(w *writer) error {
	fs, err := w.createDurable(os.O_WRONLY|os.O_APPEND, tenantNames()...)
	if err != nil {
		return err
	}
	w.say("R")
	return goroutines(tenants, func(i int) error {
		f := fs[i]
		return w.writeLog(f, uint32(i), w.rng(uint64(i)), func() error { return w.sync(f) })
	})
}

const tableWriters = 4

// writeTable overwrites records in place in a preallocated file: 4
// goroutines, each overwriting slots of its own at random (W before the
// write, A after its Datasync).
func writeTable(w *writer) error {
	fs, err := w.createDurable(os.O_RDWR, "table")
	if err != nil {
		return err
	}
	f := fs[0]
	if err := f.Preallocate(0, tableSlots*tableStride); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	w.say("R")
	var seq atomic.Uint64
	return goroutines(tableWriters, func(g int) error {
		r := w.rng(uint64(g))
		for {
			slot := g + tableWriters*r.IntN(tableSlots/tableWriters)
			s := seq.Add(1)
			w.say("W %d %d", slot, s)
			if _, err := f.WriteAt(record(uint32(slot), s, recHeader+r.IntN(tableStride-recHeader)), int64(slot)*tableStride); err != nil {
				return err
			}
			if err := w.datasync(f); err != nil {
				return err
			}
			w.ack("%d %d", slot, s)
		}
	})
}

// renameKeep is how many of the renamed files the writer keeps: each
// iteration removes the one renamed renameKeep iterations before.
const renameKeep = 16

// writeRenames writes each record to a new temporary file, syncs it,
// renames it into place, removes an old one and syncs the directory; the
// iteration is acknowledged after SyncDir.
func writeRenames(w *writer) error {
	if err := os.Mkdir(w.path("d"), 0o755); err != nil {
		return err
	}
	if err := diskio.SyncDir(w.dir); err != nil {
		return err
	}
	w.say("R")
	r := w.rng(0)
	for n := uint64(1); ; n++ {
		tmp := filepath.Join("d", fmt.Sprintf("tmp.%d", n))
		f, err := w.open(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			return err
		}
		if _, err := f.Write(record(0, n, size(r))); err != nil {
			return err
		}
		if err := w.sync(f); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		w.say("W %d", n)
		if err := os.Rename(w.path(tmp), w.path(renamed(n))); err != nil {
			return err
		}
		if n > renameKeep {
			if err := os.Remove(w.path(renamed(n - renameKeep))); err != nil {
				return err
			}
		}
		if err := w.syncDir("d"); err != nil {
			return err
		}
		w.ack("%d", n)
	}
}

func renamed(n uint64) string { return filepath.Join("d", fmt.Sprintf("f.%d", n)) }

// checkLogs checks logs written by writeLog (stream i in names[i]): every
// acknowledged record is there, in order after the ones before it.
func checkLogs(names ...string) func(dir string, ev *events) (tally, error) {
	return func(dir string, ev *events) (tally, error) {
		var t tally
		present := make([]map[uint64]bool, len(names))
		for i, name := range names {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return t, err // the set-up made every file durable
			}
			recs, torn := scanLog(b)
			if torn {
				t.torn++
			}
			present[i] = map[uint64]bool{}
			for j, p := range recs {
				if p.stream != uint32(i) || p.seq != uint64(j+1) {
					return t, fmt.Errorf("%s: record %d is stream %d seq %d", name, j, p.stream, p.seq)
				}
				present[i][p.seq] = true
			}
		}
		for _, a := range ev.acks {
			if len(a) != 2 || a[0] >= uint64(len(names)) {
				return t, fmt.Errorf("ack %v", a)
			}
			t.acked++
			if !present[a[0]][a[1]] {
				t.lost++
			}
		}
		return t, nil
	}
}

// checkGroup checks the group commit's file: every acknowledged place
// holds its record.
func checkGroup(dir string, ev *events) (tally, error) {
	var t tally
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		return t, err
	}
	present := map[uint64]bool{}
	for i := 0; i*groupStride < len(b); i++ {
		p, st := parseRecord(b[i*groupStride : min((i+1)*groupStride, len(b))])
		switch {
		case st == recTorn:
			t.torn++
		case st == recOK && (p.seq != uint64(i) || p.stream != 0):
			return t, fmt.Errorf("place %d holds record %d", i, p.seq)
		case st == recOK:
			present[uint64(i)] = true
		}
	}
	for _, a := range ev.acks {
		t.acked++
		if !present[a[0]] {
			t.lost++
		}
	}
	return t, nil
}

// checkTable checks the preallocated table: each slot holds its last
// acknowledged record, or one written after it (whole, or torn and
// detected: an overwrite in flight at the cut); lost counts the slots
// whose last acknowledged record is gone.
func checkTable(dir string, ev *events) (tally, error) {
	var t tally
	b, err := os.ReadFile(filepath.Join(dir, "table"))
	if err != nil {
		return t, err
	}
	if len(b) != tableSlots*tableStride {
		return t, fmt.Errorf("the preallocated table is %d bytes", len(b))
	}
	acked := make([]uint64, tableSlots)
	for _, a := range ev.acks {
		t.acked++
		acked[a[0]] = max(acked[a[0]], a[1])
	}
	issued := make([]map[uint64]bool, tableSlots) // writes issued after the slot's last ack
	for _, wr := range ev.writes {
		if wr[1] > acked[wr[0]] {
			if issued[wr[0]] == nil {
				issued[wr[0]] = map[uint64]bool{}
			}
			issued[wr[0]][wr[1]] = true
		}
	}
	for slot := range tableSlots {
		p, st := parseRecord(b[slot*tableStride : (slot+1)*tableStride])
		inFlight := len(issued[slot]) > 0
		switch {
		case st == recOK && p.stream != uint32(slot):
			return t, fmt.Errorf("slot %d holds slot %d's record", slot, p.stream)
		case st == recOK && (p.seq == acked[slot] || issued[slot][p.seq]):
		case st == recOK && p.seq < acked[slot]:
			t.lost++
		case st == recOK:
			return t, fmt.Errorf("slot %d holds record %d, never written there", slot, p.seq)
		case st == recTorn && inFlight:
			t.torn++
		case st == recNone && acked[slot] == 0:
		default: // torn or empty, with nothing in flight to tear it
			t.lost++
		}
	}
	return t, nil
}

// checkRenames checks the renamed files: each acknowledged one is there,
// whole, unless an acknowledged iteration removed it (then it must be
// gone: its removal is an acknowledged operation too).
func checkRenames(dir string, ev *events) (tally, error) {
	var t tally
	var last uint64
	for _, a := range ev.acks {
		t.acked++
		last = max(last, a[0])
	}
	var written uint64
	for _, wr := range ev.writes {
		written = max(written, wr[0])
	}
	for _, a := range ev.acks {
		n := a[0]
		b, err := os.ReadFile(filepath.Join(dir, renamed(n)))
		switch {
		case n+renameKeep <= last: // removed, and the removal acknowledged
			if err == nil {
				t.lost++
			}
			continue
		case n+renameKeep == last+1: // being removed at the cut
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return t, err
			}
			t.lost++
			continue
		}
		recs, torn := scanLog(b)
		if torn || len(recs) != 1 || recs[0].seq != n {
			t.lost++
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, "d"))
	if err != nil {
		return t, err
	}
	for _, e := range ents {
		var n uint64
		if _, err := fmt.Sscanf(e.Name(), "f.%d", &n); err == nil && n > written {
			return t, fmt.Errorf("%s was never renamed into place", e.Name())
		}
		if n > last && n <= written { // renamed, not acknowledged: synced before
			b, err := os.ReadFile(filepath.Join(dir, "d", e.Name()))
			if err != nil {
				return t, err
			}
			if _, torn := scanLog(b); torn {
				t.torn++
			}
		}
	}
	return t, nil
}
