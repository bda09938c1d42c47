package analyzer_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/diskio-go/diskio/cmd/diskiofix/analyzer"
)

// The testdata module's packages, each with its diagnostics (// want
// comments) and, beside each file, the file after -fix (.golden). One
// is left to the command's test (../main_test.go): withtest, whose
// internal tests decide, which analysistest checks in both of the
// package's variants, also the one without tests, where the analyzer is
// silent.
func TestAnalyzer(t *testing.T) {
	// The testdata module is not in the repository's go.work.
	t.Setenv("GOWORK", "off")
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	analysistest.RunWithSuggestedFixes(t, dir, analyzer.Analyzer,
		"./already", "./basic", "./exported", "./hook", "./left", "./other", "./wal")
}

func TestDiskioItself(t *testing.T) {
	for path, want := range map[string]bool{
		"github.com/diskio-go/diskio":                       true,
		"github.com/diskio-go/diskio_test":                  true,
		"github.com/diskio-go/diskio/trace":                 true,
		"github.com/diskio-go/diskio/internal/sys":          true,
		"github.com/diskio-go/diskio/cmd/testbench":         false,
		"github.com/diskio-go/diskio/contrib/raftwal/cmd/x": false,
		"github.com/diskio-go/diskioextra":                  false,
		"example.com/t":                                     false,
	} {
		if got := analyzer.DiskioItself(path); got != want {
			t.Errorf("DiskioItself(%q) = %v, want %v", path, got, want)
		}
	}
}
