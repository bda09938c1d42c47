//go:build linux

package pebblevfs

import (
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// gatherFile is a data file (sstable, blob) in buffered mode: Pebble's
// 4 KiB writes are gathered into writeBuffer bytes before they go to the
// diskio File, one request per 256 KiB instead of 64 (each a trip through
// the scheduler when the page cache cannot take it without waiting).
// What is gathered is written before any sync, read, Stat, WriteAt and
// Close, so the file never looks different from one written through.
type gatherFile struct {
	readFile

	mu  sync.Mutex // Write comes one at a time; ReadAt and Stat may not
	buf []byte     // bytes written by the caller, not yet given to the File
	err error      // first write error: what reached the file is unknown after it
}

var _ vfs.File = (*gatherFile)(nil)

func (g *gatherFile) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return 0, g.err
	}
	if len(g.buf)+len(p) <= cap(g.buf) {
		g.buf = append(g.buf, p...)
		return len(p), nil
	}
	if err := g.flush(); err != nil {
		return 0, err
	}
	if len(p) >= cap(g.buf) {
		n, err := g.f.Write(p)
		if err != nil {
			g.err = err
		}
		return n, err
	}
	g.buf = append(g.buf, p...)
	return len(p), nil
}

// flush writes what is gathered; g.mu is held.
func (g *gatherFile) flush() error {
	if g.err != nil {
		return g.err
	}
	if len(g.buf) == 0 {
		return nil
	}
	_, err := g.f.Write(g.buf)
	g.buf = g.buf[:0]
	if err != nil {
		g.err = err
	}
	return err
}

// flushed runs fn after writing what is gathered.
func (g *gatherFile) flushed(fn func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.flush(); err != nil {
		return err
	}
	return fn()
}

func (g *gatherFile) Sync() error     { return g.flushed(g.readFile.Sync) }
func (g *gatherFile) SyncData() error { return g.flushed(g.readFile.SyncData) }

func (g *gatherFile) SyncTo(length int64) (fullSync bool, err error) {
	err = g.flushed(func() (err error) {
		fullSync, err = g.readFile.SyncTo(length)
		return err
	})
	return fullSync, err
}

func (g *gatherFile) ReadAt(p []byte, off int64) (n int, err error) {
	err = g.flushed(func() (err error) {
		n, err = g.readFile.ReadAt(p, off)
		return err
	})
	return n, err
}

func (g *gatherFile) Read(p []byte) (n int, err error) {
	err = g.flushed(func() (err error) {
		n, err = g.readFile.Read(p)
		return err
	})
	return n, err
}

func (g *gatherFile) WriteAt(p []byte, off int64) (n int, err error) {
	err = g.flushed(func() (err error) {
		n, err = g.readFile.WriteAt(p, off)
		return err
	})
	return n, err
}

func (g *gatherFile) Stat() (fi vfs.FileInfo, err error) {
	err = g.flushed(func() (err error) {
		fi, err = g.readFile.Stat()
		return err
	})
	return fi, err
}

// Close writes what is gathered and closes the file.
func (g *gatherFile) Close() error {
	g.mu.Lock()
	err := g.flush()
	g.mu.Unlock()
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}
