// Package docscheck checks that what the design documents quote is the
// code's: every backquoted Go identifier, file, directory, package path,
// command, testbench flag, environment variable and "string" in them
// resolves in the repository (or in the standard library, for a qualified standard
// name), and every relative link in the repository's Markdown points at a
// file that exists. Its tests run the check over docs/design.md,
// docs/layout.md and docs/scheduler.md.
//
// An identifier resolves when some non-test file of the repository (any
// module: the root, cmd/testbench, contrib/...) declares it at package
// level, as a method, or as a struct field or interface method; a
// qualified one (sched.File.ReadAt) must be declared in the package it
// names. Test, benchmark, fuzz and example functions resolve against the
// test files. What is not Go (system calls, kernel constants, other
// projects' names) resolves only through the rules and the short list in
// kernel.go.
package docscheck

import (
	"bufio"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// pkg is what one package directory declares.
type pkg struct {
	dir     string                     // slash-separated, relative to the index's root ("" for the root)
	decls   map[string]bool            // package-level names
	members map[string]map[string]bool // type name: its methods, fields and interface methods
	embeds  map[string][]string        // type name: the types it embeds
}

func newPkg(dir string) *pkg {
	return &pkg{dir: dir, decls: map[string]bool{}, members: map[string]map[string]bool{}, embeds: map[string][]string{}}
}

// hasMember reports whether type typ of p has member m, directly or
// through a type it embeds that p declares.
func (p *pkg) hasMember(typ, m string) bool {
	seen := map[string]bool{}
	var has func(t string) bool
	has = func(t string) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		if p.members[t][m] {
			return true
		}
		for _, e := range p.embeds[t] {
			if has(e) {
				return true
			}
		}
		return false
	}
	return has(typ)
}

// Index is what the check resolves names against: one repository's files,
// declarations, string literals and modules.
type Index struct {
	root      string
	files     map[string]bool   // every file, relative and slash-separated
	dirs      map[string]bool   // every directory
	pkgs      map[string][]*pkg // package name: its directories' declarations (non-test files)
	byDir     map[string]*pkg
	testNames map[string]bool // package names of test files (diskio_test)
	testFuncs map[string]bool // Test*, Benchmark*, Fuzz*, Example* functions
	literals  map[string][]string
	modules   map[string]string // module path: its directory
	requires  map[string]bool   // every module path some go.mod requires

	goroot string
	std    map[string]*pkg // standard-library import path: its declarations, parsed on demand
}

// skipDir reports whether a directory is left out of the index: version
// control, and what Go itself ignores.
func skipDir(name string) bool {
	return name == ".git" || name == "testdata" || name == "vendor" || name == "node_modules" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// Load indexes the repository at root.
func Load(root string) (*Index, error) {
	ix := &Index{
		root: root, files: map[string]bool{}, dirs: map[string]bool{"": true},
		pkgs: map[string][]*pkg{}, byDir: map[string]*pkg{}, testNames: map[string]bool{},
		testFuncs: map[string]bool{}, literals: map[string][]string{},
		modules: map[string]string{}, requires: map[string]bool{},
		goroot: build.Default.GOROOT, std: map[string]*pkg{},
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			ix.dirs[rel] = true
			return nil
		}
		ix.files[rel] = true
		if d.Name() == "go.mod" {
			return ix.readGoMod(p, path.Dir(rel))
		}
		if !strings.HasSuffix(rel, ".go") || !goSource(rel) {
			return nil
		}
		return ix.parseGo(fset, p, rel)
	})
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// goSource reports whether a .go file at rel is one the Go tool builds:
// not under testdata, vendor or a directory it ignores.
func goSource(rel string) bool {
	for _, e := range strings.Split(path.Dir(rel), "/") {
		if e != "." && skipDir(e) {
			return false
		}
	}
	return true
}

func (ix *Index) readGoMod(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if dir == "." {
		dir = ""
	}
	inRequire := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		switch {
		case len(w) == 0:
		case w[0] == "module" && len(w) > 1:
			ix.modules[w[1]] = dir
		case w[0] == "require" && len(w) > 1 && w[1] == "(":
			inRequire = true
		case w[0] == "require" && len(w) > 1:
			ix.requires[w[1]] = true
		case inRequire && w[0] == ")":
			inRequire = false
		case inRequire:
			ix.requires[w[0]] = true
		}
	}
	return sc.Err()
}

func (ix *Index) parseGo(fset *token.FileSet, file, rel string) error {
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	if strings.HasSuffix(rel, "_test.go") {
		ix.testNames[f.Name.Name] = true
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && testFunc(fd.Name.Name) {
				ix.testFuncs[fd.Name.Name] = true
			}
		}
		return nil
	}
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	p := ix.byDir[dir]
	if p == nil {
		p = newPkg(dir)
		ix.byDir[dir] = p
		ix.pkgs[f.Name.Name] = append(ix.pkgs[f.Name.Name], p)
	}
	addDecls(p, f)
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				ix.literals[s] = append(ix.literals[s], dir)
			}
		}
		return true
	})
	return nil
}

func testFunc(name string) bool {
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// addDecls records what file f declares in p.
func addDecls(p *pkg, f *ast.File) {
	member := func(typ, m string) {
		if p.members[typ] == nil {
			p.members[typ] = map[string]bool{}
		}
		p.members[typ][m] = true
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				p.decls[d.Name.Name] = true
				continue
			}
			if t := recvType(d.Recv.List[0].Type); t != "" {
				member(t, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.decls[n.Name] = true
					}
				case *ast.TypeSpec:
					p.decls[s.Name.Name] = true
					var fields []*ast.Field
					switch t := s.Type.(type) {
					case *ast.StructType:
						fields = t.Fields.List
					case *ast.InterfaceType:
						fields = t.Methods.List
					}
					for _, fl := range fields {
						for _, n := range fl.Names {
							member(s.Name.Name, n.Name)
						}
						if len(fl.Names) == 0 {
							if e := recvType(fl.Type); e != "" {
								member(s.Name.Name, e)
								p.embeds[s.Name.Name] = append(p.embeds[s.Name.Name], e)
							}
						}
					}
				}
			}
		}
	}
}

// recvType is the name of the type e denotes: T, *T, T[P], pkg.T.
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

// stdPkg returns the declarations of standard-library package importPath,
// or nil if the installed Go has no such package.
func (ix *Index) stdPkg(importPath string) *pkg {
	if p, ok := ix.std[importPath]; ok {
		return p
	}
	var p *pkg
	dir := filepath.Join(ix.goroot, "src", filepath.FromSlash(importPath))
	if ents, err := os.ReadDir(dir); err == nil {
		fset := token.NewFileSet()
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			if p == nil {
				p = newPkg(importPath)
			}
			addDecls(p, f)
		}
	}
	ix.std[importPath] = p
	return p
}

// stdDir reports whether importPath is a directory of the standard library.
func (ix *Index) stdDir(importPath string) bool {
	st, err := os.Stat(filepath.Join(ix.goroot, "src", filepath.FromSlash(importPath)))
	return err == nil && st.IsDir()
}
