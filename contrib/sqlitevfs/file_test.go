//go:build linux

package sqlitevfs

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ncruces/go-sqlite3/vfs"
)

// SQLite's sync flags map onto Datasync and Sync: at SQLite's default
// settings every sync is an fdatasync (as SQLite's unix VFS issues on
// Linux, directories included); with PRAGMA fullfsync the database's
// syncs are fsyncs.
func TestSyncFlags(t *testing.T) {
	for _, full := range []bool{false, true} {
		s, ops := tracedScheduler(t)
		name := registerVFS(t, Options{Scheduler: s})
		c := openConn(t, filepath.Join(t.TempDir(), "sync.db"), name)
		q := `PRAGMA journal_mode=delete; PRAGMA synchronous=full; PRAGMA fullfsync=` + map[bool]string{false: "off", true: "on"}[full]
		run(t, c, q+`; CREATE TABLE t (x); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)`)
		fsyncs, fdatasyncs := ops.count("fsync"), ops.count("fdatasync")
		switch {
		case !full && (fsyncs != 0 || fdatasyncs == 0):
			t.Errorf("default: %d fsyncs, %d fdatasyncs; want fdatasyncs only", fsyncs, fdatasyncs)
		case full && fsyncs == 0:
			t.Errorf("fullfsync: %d fsyncs, %d fdatasyncs; want fsyncs", fsyncs, fdatasyncs)
		}
		t.Logf("fullfsync %v: %v", full, ops)
	}
}

// The sector size and device characteristics are the mode's: 4096 and
// powersafe overwrite with sub-page reads for a page-cache file; for an
// O_DIRECT file the sector is at least its direct-I/O block.
func TestDeviceCharacteristics(t *testing.T) {
	for _, mode := range []Mode{PageCache, Direct} {
		v := New(Options{Mode: mode})
		path := filepath.Join(t.TempDir(), "dc.db")
		f, _, err := v.Open(path, vfs.OPEN_MAIN_DB|vfs.OPEN_READWRITE|vfs.OPEN_CREATE)
		if err != nil {
			t.Fatal(err)
		}
		ff := f.(*file)
		want := 4096
		if mode == Direct {
			if !ff.f.Direct() {
				t.Fatalf("direct mode: the database is not O_DIRECT")
			}
			want = max(4096, ff.f.Alignment())
		}
		if got := f.SectorSize(); got != want {
			t.Errorf("%s: sector size %d, want %d", mode, got, want)
		}
		dc := f.DeviceCharacteristics()
		if dc != vfs.IOCAP_POWERSAFE_OVERWRITE|vfs.IOCAP_SUBPAGE_READ {
			t.Errorf("%s: device characteristics %#x", mode, dc)
		}
		ff.SetPowersafeOverwrite(false)
		if f.DeviceCharacteristics()&vfs.IOCAP_POWERSAFE_OVERWRITE != 0 {
			t.Errorf("%s: psow off, still announced", mode)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A WAL's frame header is held back and written with its page, in one
// write; held bytes reach the file before any other use of it (a write
// elsewhere, a read, a sync, its size, a truncation, Close). Journals
// hold nothing back.
func TestWALFrameJoined(t *testing.T) {
	s, ops := tracedScheduler(t)
	v := New(Options{Scheduler: s})
	dir := t.TempDir()
	open := func(name string, flags vfs.OpenFlag) (vfs.File, string) {
		path := filepath.Join(dir, name)
		f, _, err := v.Open(path, flags|vfs.OPEN_READWRITE|vfs.OPEN_CREATE)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f, path
	}
	check := func(what string, path string, want []byte) {
		t.Helper()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the file holds %d bytes, want %d (%q...)", what, len(got), len(want), got[:min(len(got), 8)])
		}
	}
	write := func(f vfs.File, p []byte, off int64) {
		t.Helper()
		if n, err := f.WriteAt(p, off); err != nil || n != len(p) {
			t.Fatalf("WriteAt(%d bytes, %d) = %d, %v", len(p), off, n, err)
		}
	}
	wal, path := open("j.db-wal", vfs.OPEN_WAL)
	walHdr, frameHdr, page := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 24), bytes.Repeat([]byte{3}, 4096)
	writes := ops.count("write")

	// The WAL's header and the first frame's header wait for the page,
	// and the three go in one write.
	write(wal, walHdr, 0)
	write(wal, frameHdr, 32)
	check("before the page", path, nil)
	write(wal, page, 56)
	want := slices.Concat(walHdr, frameHdr, page)
	check("after the page", path, want)
	if n := ops.count("write") - writes; n != 1 {
		t.Errorf("WAL header, frame header and page: %d writes, want 1", n)
	}

	// Each other use of the file writes what is held first.
	uses := []struct {
		name string
		use  func() error
	}{
		{"Size", func() error { _, err := wal.Size(); return err }},
		{"ReadAt", func() error { _, err := wal.ReadAt(make([]byte, 8), 0); return err }},
		{"Sync", func() error { return wal.Sync(vfs.SYNC_NORMAL) }},
		{"Truncate", func() error { return wal.Truncate(int64(len(want) + len(frameHdr))) }},
		{"Close", wal.Close},
	}
	for _, u := range uses {
		write(wal, frameHdr, int64(len(want)))
		check(u.name+": before", path, want)
		if err := u.use(); err != nil {
			t.Fatalf("%s: %v", u.name, err)
		}
		want = append(want, frameHdr...)
		check(u.name+": after", path, want)
		if u.name == "Truncate" {
			want = want[:len(want)-len(frameHdr)] // it cut the bytes just written
			if err := wal.Truncate(int64(len(want))); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A write elsewhere too.
	wal2, path2 := open("k.db-wal", vfs.OPEN_WAL)
	write(wal2, frameHdr, 0)
	write(wal2, page, 100)
	got, err := os.ReadFile(path2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100+len(page) || !bytes.Equal(got[:24], frameHdr) || !bytes.Equal(got[100:], page) {
		t.Fatalf("a write elsewhere: the held header was not written first (%d bytes)", len(got))
	}

	// A journal's small writes go at once.
	journal, jpath := open("j.db-journal", vfs.OPEN_MAIN_JOURNAL)
	write(journal, []byte{0, 0, 0, 1}, 0)
	check("journal", jpath, []byte{0, 0, 0, 1})
}

// The first sync of a journal the connection created also flushes its
// directory (both before Sync returns); later syncs flush the file alone.
func TestJournalSyncsDirectoryOnce(t *testing.T) {
	s, ops := tracedScheduler(t)
	v := New(Options{Scheduler: s})
	path := filepath.Join(t.TempDir(), "d.db-journal")
	f, _, err := v.Open(path, vfs.OPEN_MAIN_JOURNAL|vfs.OPEN_READWRITE|vfs.OPEN_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, want := range []int64{2, 1, 1} {
		before := ops.count("fdatasync")
		if _, err := f.WriteAt([]byte("record"), int64(i)*512); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(vfs.SYNC_NORMAL); err != nil {
			t.Fatal(err)
		}
		if got := ops.count("fdatasync") - before; got != want {
			t.Errorf("sync %d: %d fdatasyncs, want %d (the file%s)", i+1, got, want, map[bool]string{true: " and its directory"}[want == 2])
		}
	}
}
