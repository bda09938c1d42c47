//go:build linux

package pebblevfs

import (
	"testing"

	"github.com/diskio-go/diskio"
)

// The FS's modes are diskio's under their names, with Direct the zero
// value; "buffered" still names the page cache.
func TestModeNames(t *testing.T) {
	for s, want := range map[string]Mode{"direct": Direct, "pagecache": PageCache, "page-cache": PageCache, "buffered": Buffered} {
		m, err := ParseMode(s)
		if err != nil || m != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", s, m, err, want)
		}
	}
	for _, s := range []string{"direct-required", "odirect"} {
		if _, err := ParseMode(s); err == nil {
			t.Errorf("ParseMode(%q) succeeded", s)
		}
	}
	if Direct.DirectMode() != diskio.Direct || PageCache.DirectMode() != diskio.PageCache || Mode(5).DirectMode() != diskio.Direct {
		t.Error("DirectMode does not follow diskio's modes")
	}
	if (FS{}).Mode != Direct || Direct.String() != "direct" || PageCache.String() != "pagecache" {
		t.Error("the zero FS is not direct, or the names are not diskio's")
	}
	if _, err := Mode(5).MarshalText(); err == nil {
		t.Error("MarshalText of Mode(5) succeeded")
	}
}
