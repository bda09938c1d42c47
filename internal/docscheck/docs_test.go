package docscheck

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the root of the repository: the directory above this one
// whose go.mod is the library's.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(b), "module github.com/diskio-go/diskio\n") {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod of module github.com/diskio-go/diskio above the test's directory")
		}
		dir = up
	}
}

var (
	indexOnce sync.Once
	index     *Index
	indexErr  error
)

func loadIndex(t *testing.T) *Index {
	t.Helper()
	root := repoRoot(t)
	indexOnce.Do(func() { index, indexErr = Load(root) })
	if indexErr != nil {
		t.Fatal(indexErr)
	}
	return index
}

// The current design's documents quote only what the code declares.
func TestDesignDocsResolve(t *testing.T) {
	ix := loadIndex(t)
	for _, doc := range []string{"docs/design.md", "docs/layout.md", "docs/scheduler.md"} {
		ps, err := ix.Check(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			t.Error(p)
		}
	}
}

// Every relative link in the repository's Markdown files points at a
// file or directory that exists.
func TestMarkdownLinksResolve(t *testing.T) {
	ix := loadIndex(t)
	n := 0
	for f := range ix.files {
		if !strings.HasSuffix(f, ".md") || !goSource(f) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(ix.root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, p := range ix.CheckLinks(f, string(b)) {
			t.Error(p)
		}
	}
	if n == 0 {
		t.Fatal("no Markdown file found")
	}
}

// layout.md names every file of the packages it has a section for, and
// every package of the library's module.
func TestLayoutListsEverything(t *testing.T) {
	ix := loadIndex(t)
	b, err := os.ReadFile(filepath.Join(ix.root, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ix.Unlisted("docs/layout.md", string(b)) {
		t.Error(p)
	}
}

// The dated notes live in docs/notes, each linked from its index.
func TestNotesIndexed(t *testing.T) {
	ix := loadIndex(t)
	b, err := os.ReadFile(filepath.Join(ix.root, "docs", "notes", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
		linked[path.Join("docs/notes", m[1])] = true
	}
	for f := range ix.files {
		switch {
		case strings.HasPrefix(f, "docs/notes/") && f != "docs/notes/README.md" && !linked[f]:
			t.Errorf("%s: not linked from docs/notes/README.md", f)
		case path.Dir(f) == "docs" && dated(path.Base(f)):
			t.Errorf("%s: a dated note outside docs/notes", f)
		}
	}
}

// dated reports whether a file's name starts with a date, 2026-11-28-.
func dated(name string) bool {
	return len(name) > 11 && name[4] == '-' && name[7] == '-' && name[10] == '-' &&
		strings.Trim(name[:4]+name[5:7]+name[8:10], "0123456789") == ""
}
