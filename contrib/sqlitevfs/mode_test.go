package sqlitevfs

import (
	"testing"

	"github.com/diskio-go/diskio"
)

// ParseMode and the package's mode names are diskio's, as they were;
// Register takes each of diskio's modes and refuses any other value.
func TestModeNames(t *testing.T) {
	for s, want := range map[string]Mode{"pagecache": PageCache, "direct": Direct, "direct-required": diskio.DirectRequired} {
		if m, err := ParseMode(s); err != nil || m != want || m.String() != s {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", s, m, err, want)
		}
	}
	if _, err := ParseMode("default"); err == nil {
		t.Error(`ParseMode("default") succeeded`)
	}
	if err := Register("modenames-bad", Options{Mode: diskio.DirectMode(7)}); err == nil {
		t.Error("Register took mode 7")
	}
	if err := Register("modenames-required", Options{Mode: diskio.DirectRequired}); err != nil {
		t.Error(err)
	}
}
