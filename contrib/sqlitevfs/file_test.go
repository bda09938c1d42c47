//go:build linux

package sqlitevfs

import (
	"path/filepath"
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
