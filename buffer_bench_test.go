//go:build linux

package diskio_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/diskio-go/diskio"
)

// BenchmarkReadBufferCached: making and releasing a pooled Buffer (its
// cleanup is attached once per Buffer object, not per use), and a whole
// 4 KiB ReadBuffer for scale.
//
//	go test -run '^$' -bench ReadBufferCached -count 3 .
func BenchmarkReadBufferCached(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(path, randomBytes(1<<20, 1), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := diskio.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.Run("make-release", func(b *testing.B) {
		m, err := diskio.ExportGetMem(f, 4096)
		if err != nil {
			b.Fatal(err)
		}
		for range b.N {
			buf := diskio.ExportNewBuffer(m)
			sink = buf
			buf.Release()
		}
	})
	b.Run("ReadBuffer-4K", func(b *testing.B) {
		for i := range b.N {
			buf, err := f.ReadBuffer(int64(i%256)*4096, 4096)
			if err != nil {
				b.Fatal(err)
			}
			buf.Release()
		}
	})
}

var sink *diskio.Buffer
