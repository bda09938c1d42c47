package crash

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/diskio-go/diskio"
)

// AppendOptions configure the appending side (the child of Run, and
// Client).
type AppendOptions struct {
	Path        string // the log; created with a fresh seed if absent or empty
	Seed        uint64 // seed of a new log
	Writers     int    // goroutines appending concurrently (default 4)
	MaxRecord   int    // payload bytes of a record at most (default 9000)
	FullSync    bool   // Sync instead of Datasync
	Preallocate bool   // reserve space ahead with PreallocateKeepSize
	Direct      bool   // open the log with O_DIRECT (diskio.Direct) instead of the page cache
}

func (o *AppendOptions) maxRecord() int {
	o.defaults()
	return o.MaxRecord
}

func (o *AppendOptions) defaults() {
	if o.Writers <= 0 {
		o.Writers = 4
	}
	if o.MaxRecord <= 0 {
		o.MaxRecord = 9000
	}
}

// appendLog opens (recovering) the log and appends records until ctx ends
// or an error. ack is called, in order and never concurrently, with the
// number of records known durable: records 0..n-1 are written and a flush
// issued after each of them completed has succeeded. The first call says
// how many records were recovered.
func appendLog(ctx context.Context, o AppendOptions, ack func(n uint64) error) error {
	o.defaults()
	mode := diskio.PageCache
	if o.Direct {
		mode = diskio.Direct
	}
	f, err := diskio.OpenFile(o.Path, os.O_RDWR|os.O_CREATE, 0o644, diskio.WithDirect(mode))
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := os.ReadFile(o.Path)
	if err != nil {
		return err
	}
	var p parsed
	if len(data) == 0 {
		if _, err := f.WriteAt(header(o.Seed), 0); err != nil {
			return err
		}
		p = parsed{seed: o.Seed, valid: fileHeader}
	} else if p, err = parse(data, o.MaxRecord); err != nil {
		return err
	}
	// Cut the torn tail, make the recovered state durable, name included.
	if err := f.Truncate(p.valid); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := diskio.SyncDir(filepath.Dir(o.Path)); err != nil {
		return err
	}
	a := &appender{f: f, o: o, seed: p.seed, next: p.records, off: p.valid, reserved: p.valid, acked: p.records, ack: ack, done: map[uint64]bool{}}
	if err := ack(p.records); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, o.Writers)
	var wg sync.WaitGroup
	for range o.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := a.appendOne(); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

type appender struct {
	f    *diskio.File
	o    AppendOptions
	seed uint64

	mu       sync.Mutex
	next     uint64          // next record to place
	off      int64           // where it goes
	reserved int64           // space preallocated up to
	acked    uint64          // records 0..acked-1 are durable and acknowledged
	done     map[uint64]bool // durable records above acked
	ack      func(uint64) error
}

const preallocStep = 4 << 20

// appendOne writes one record at the next place, flushes, and
// acknowledges every record whose predecessors are all durable: a log is
// only as durable as its prefix.
func (a *appender) appendOne() error {
	a.mu.Lock()
	seq, off := a.next, a.off
	n := recordLen(a.seed, seq, a.o.MaxRecord)
	a.next++
	a.off += int64(recOverhead + n)
	if a.o.Preallocate && a.off > a.reserved-preallocStep/2 {
		if err := a.f.PreallocateKeepSize(a.reserved, preallocStep); err != nil {
			a.mu.Unlock()
			return err
		}
		a.reserved += preallocStep
	}
	a.mu.Unlock()
	rec := appendRecord(nil, a.seed, seq, n)
	if _, err := a.f.WriteAt(rec, off); err != nil {
		return err
	}
	var err error
	if a.o.FullSync {
		err = a.f.Sync()
	} else {
		err = a.f.Datasync()
	}
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done[seq] = true
	moved := false
	for a.done[a.acked] {
		delete(a.done, a.acked)
		a.acked++
		moved = true
	}
	if moved {
		if err := a.ack(a.acked); err != nil {
			return fmt.Errorf("crash: reporting an acknowledgement: %w", err)
		}
	}
	return nil
}
