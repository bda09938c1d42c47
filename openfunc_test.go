package diskio_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/diskio-go/diskio"
)

// storeOptions keeps an open function as a value, as bbolt's Options
// does with os.OpenFile.
type storeOptions struct {
	OpenFile func(string, int, os.FileMode) (*diskio.File, error)
}

// An OpenFileFunc goes where os.OpenFile was kept as a value.
func ExampleOpenFileFunc() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	opts := storeOptions{OpenFile: diskio.OpenFileFunc(diskio.WithDirect(diskio.Direct))}
	f, err := opts.OpenFile(filepath.Join(dir, "store.db"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("page 0"), 0); err != nil {
		log.Fatal(err)
	}
	b := make([]byte, 6)
	if _, err := f.ReadAt(b, 0); err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b))
	// Output: page 0
}

// openOutcome is what an open gave: its error's text, or whether the File is
// direct.
func openOutcome(f *diskio.File, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	defer f.Close()
	return fmt.Sprintf("direct %v", f.Direct())
}

func TestOpenFileFunc(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	var open func(string, int, fs.FileMode) (*diskio.File, error) = diskio.OpenFileFunc()

	t.Run("errors", func(t *testing.T) {
		missing := filepath.Join(dir, "missing")
		_, err := open(missing, os.O_RDONLY, 0)
		_, osErr := os.OpenFile(missing, os.O_RDONLY, 0)
		var pe *fs.PathError
		if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) || err.Error() != osErr.Error() {
			t.Fatalf("open of a missing file: %v, os.OpenFile: %v", err, osErr)
		}
	})

	t.Run("io", func(t *testing.T) {
		f, err := open(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("abc"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != 3 || fi.Mode().Perm()&^0o640 != 0 {
			t.Fatalf("created %v %d bytes, want at most 0640 and 3", fi.Mode(), fi.Size())
		}
		if _, err := open(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("O_EXCL on an existing file: %v", err)
		}
	})

	// The options bound are OpenFile's, and a copy: what the caller's
	// slice holds later changes nothing. DirectRequired either gives a
	// direct File or fails (where the filesystem refuses O_DIRECT),
	// so the two outcomes differ from PageCache's everywhere.
	t.Run("options", func(t *testing.T) {
		required := openOutcome(diskio.OpenFile(name, os.O_RDWR, 0, diskio.WithDirect(diskio.DirectRequired)))
		if got := openOutcome(diskio.OpenFileFunc(diskio.WithDirect(diskio.DirectRequired))(name, os.O_RDWR, 0)); got != required {
			t.Errorf("OpenFileFunc(DirectRequired): %s, OpenFile: %s", got, required)
		}
		opts := []diskio.Option{diskio.WithDirect(diskio.PageCache)}
		fn := diskio.OpenFileFunc(opts...)
		opts[0] = diskio.WithDirect(diskio.DirectRequired)
		if got := openOutcome(fn(name, os.O_RDWR, 0)); got != "direct false" {
			t.Errorf("after the caller's slice changed: %s, want the page cache's", got)
		}
	})

	// SetDefaultOptions at the time of the call applies, as to OpenFile.
	t.Run("defaults", func(t *testing.T) {
		fn := diskio.OpenFileFunc()
		diskio.SetDefaultOptions(diskio.WithDirect(diskio.DirectRequired))
		defer diskio.SetDefaultOptions()
		required := openOutcome(diskio.OpenFile(name, os.O_RDWR, 0))
		if got := openOutcome(fn(name, os.O_RDWR, 0)); got != required || got == "direct false" {
			t.Errorf("with DirectRequired as default: %s, OpenFile: %s", got, required)
		}
	})
}
