package analyzer

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// skipNonTestVariant reports whether pass is a package without its
// _test.go files while the directory holds some of the same package: the
// variant with them sees every use, and its fix must be the one applied.
func skipNonTestVariant(pass *analysis.Pass) bool {
	var dir string
	for _, f := range pass.Files {
		name := pass.Fset.File(f.Pos()).Name()
		if strings.HasSuffix(name, "_test.go") {
			return false
		}
		if dir == "" {
			dir = filepath.Dir(name)
		}
	}
	return dir != "" && hasInternalTests(dir, pass.Pkg.Name())
}

// hasInternalTests reports whether dir holds _test.go files of package
// pkg (not pkg_test).
func hasInternalTests(dir, pkg string) bool {
	names, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.PackageClauseOnly)
		if err == nil && f.Name.Name == pkg {
			return true
		}
	}
	return false
}

// diskioItself reports whether path is a package of diskio's own module
// that the rewrite must leave: the library (package diskio imports some,
// which would make a cycle) and its tests, whose oracle is os.File. The
// commands and adapters (cmd/, contrib/) are users like any other.
func diskioItself(path string) bool {
	rest, ok := strings.CutPrefix(path, DiskioPath)
	switch {
	case !ok:
		return false
	case rest == "" || rest == "_test":
		return true
	case !strings.HasPrefix(rest, "/"):
		return false
	}
	return !strings.HasPrefix(rest, "/cmd/") && !strings.HasPrefix(rest, "/contrib/")
}
