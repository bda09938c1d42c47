package powercut

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/sched"
)

// The writer is the test binary again, in a child process the test kills
// after the cut. It says what it did on its standard output, a line per
// event, each written with one write(2) before the next step, so that a
// line the test reads is a step taken:
//
//	R                 set up: the files exist and are durable
//	D 0|1             File.Direct of the first file opened
//	W <fields>        a write about to be issued (where a check needs it)
//	A <fields>        an operation acknowledged: its sync returned
//	S <r> <w> <s> <f> the scheduler's reads, writes, syncs, syncfs calls
//	E <error>         the error the writer stopped on
const (
	envScenario = "POWERCUT_WRITER" // the scenario to write (the child's marker)
	envDir      = "POWERCUT_DIR"
	envMode     = "POWERCUT_MODE"   // pagecache or direct
	envNoSync   = "POWERCUT_NOSYNC" // all: skip every sync that makes a step durable; dir: skip SyncDir
	envSeed     = "POWERCUT_SEED"
)

type writer struct {
	dir       string
	mode      string
	opts      []diskio.Option
	noSync    bool // skip Sync, Datasync, WriteAtDSync's flag and SyncDir
	noSyncDir bool // skip SyncDir
	seed      uint64

	mu     sync.Mutex
	acks   int
	direct bool // D was said
}

// runWriter is the child's body: it writes scenario until killed, or
// until an error (after the cut, EIO), which it says.
func runWriter(scenario string) {
	w := &writer{dir: os.Getenv(envDir), mode: os.Getenv(envMode), noSync: os.Getenv(envNoSync) == "all"}
	w.noSyncDir = w.noSync || os.Getenv(envNoSync) == "dir"
	w.seed, _ = strconv.ParseUint(os.Getenv(envSeed), 10, 64)
	if w.mode == "direct" {
		w.opts = append(w.opts, diskio.WithDirect(diskio.Direct))
	}
	sc, ok := scenarios[scenario]
	if !ok {
		w.say("E unknown scenario %q", scenario)
		os.Exit(2)
	}
	if err := sc.write(w); err != nil {
		w.say("E %v", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func (w *writer) say(format string, args ...any) {
	line := fmt.Sprintf(format, args...) + "\n"
	w.mu.Lock()
	os.Stdout.WriteString(line)
	w.mu.Unlock()
}

func (w *writer) path(name string) string { return filepath.Join(w.dir, name) }

// open opens name through diskio in the writer's mode and says once
// whether the File got O_DIRECT.
func (w *writer) open(name string, flag int) (*diskio.File, error) {
	f, err := diskio.OpenFile(w.path(name), flag, 0o644, w.opts...)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	first := !w.direct
	w.direct = true
	w.mu.Unlock()
	if first {
		d := 0
		if f.Direct() {
			d = 1
		}
		w.say("D %d", d)
	}
	return f, nil
}

// ack says an operation is acknowledged, and now and then the
// scheduler's statistics.
func (w *writer) ack(format string, args ...any) {
	w.say("A "+format, args...)
	w.mu.Lock()
	w.acks++
	n := w.acks
	w.mu.Unlock()
	if n%32 == 1 {
		w.stats()
	}
}

func (w *writer) stats() {
	s, err := diskio.SchedulerOf(w.opts...)
	if err != nil {
		return
	}
	st := s.Stats()
	r, wr := st.Total(sched.OpRead), st.Total(sched.OpWrite)
	fs, fd := st.Total(sched.OpFsync), st.Total(sched.OpFdatasync)
	w.say("S %d %d %d %d", r.Requests(), wr.Requests(), fs.Requests()+fd.Requests(), s.FlushStats().Syncfs)
}

func (w *writer) sync(f *diskio.File) error {
	if w.noSync {
		return nil
	}
	return f.Sync()
}

func (w *writer) datasync(f *diskio.File) error {
	if w.noSync {
		return nil
	}
	return f.Datasync()
}

func (w *writer) syncDir(dir string) error {
	if w.noSyncDir {
		return nil
	}
	return diskio.SyncDir(w.path(dir))
}

// createDurable creates the files named, empty, and makes them and their
// directory durable (always: the set-up is not what is checked).
func (w *writer) createDurable(flag int, names ...string) ([]*diskio.File, error) {
	fs := make([]*diskio.File, len(names))
	for i, name := range names {
		f, err := w.open(name, flag|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		fs[i] = f
	}
	if err := diskio.SyncDir(w.dir); err != nil {
		return nil, err
	}
	return fs, nil
}

// size is a record length: a few bytes to three pages and a bit, so that
// records straddle pages.
func size(r *rand.Rand) int { return recHeader + r.IntN(3*Page+512) }

// writeLog appends records to f and makes each durable with flush,
// acknowledging "stream seq" after it.
func (w *writer) writeLog(f *diskio.File, stream uint32, r *rand.Rand, flush func() error) error {
	for seq := uint64(1); ; seq++ {
		if _, err := f.Write(record(stream, seq, size(r))); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		w.ack("%d %d", stream, seq)
	}
}

// goroutines runs n copies of fn and returns the first error.
func goroutines(n int, fn func(i int) error) error {
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() { errs <- fn(i) }()
	}
	return <-errs
}

// The places of fixed-place records: group commit's (not page-aligned,
// so that neighbours share pages) and the preallocated table's slots.
const (
	groupStride = 6000
	tableSlots  = 64
	tableStride = 3 * Page
)
