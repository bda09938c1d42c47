// Package analyzer is diskiofix's analysis: it moves the files a package
// opens with package os onto diskio, where the *os.File stays within code
// that a *diskio.File serves as well.
//
// The unit is a group of places that must share one type: an open
// (os.Open, os.OpenFile, os.Create, os.CreateTemp, ioutil.TempFile, or
// os.OpenFile kept as a function value), the variables, struct fields,
// parameters and results of the package's own functions it flows into,
// through assignments, returns, calls of the package's functions and
// struct literals, and the function-typed fields and variables whose
// results are such a file (an OpenFile hook). A group whose every use is
// one *diskio.File also has (its methods, interfaces it implements, == and
// nil) is rewritten: the opens become diskio's, the declared types
// *diskio.File. A group in which the file goes anywhere else is left on
// *os.File, and each of its opens is reported with the first reason: a
// function of another package wanting *os.File, a process's stdio, a value
// of another source (os.Stdout, os.Pipe, an external function's result), a
// slice, map or channel, an address taken, the package's exported API
// (unless -exported), ...
package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"reflect"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/diskio-go/diskio"
)

// DiskioPath is the import path of the package the rewrite moves to.
const DiskioPath = "github.com/diskio-go/diskio"

// Analyzer reports, and with -fix rewrites, the opens of package os whose
// files can be diskio Files.
var Analyzer = &analysis.Analyzer{
	Name:     "diskiofix",
	Doc:      "move os.Open, os.OpenFile, os.Create, os.CreateTemp and ioutil.TempFile, and the *os.File types their files flow into, to diskio where a *diskio.File serves every use",
	URL:      "https://github.com/diskio-go/diskio/tree/main/cmd/diskiofix",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

var rewriteExported bool

func init() {
	Analyzer.Flags.BoolVar(&rewriteExported, "exported", false,
		"also rewrite *os.File in the package's exported API (other packages using it then need the change too)")
}

// diskioMethods are the methods of *diskio.File on the system the tool
// runs on.
var diskioMethods = func() map[string]bool {
	t := reflect.TypeFor[*diskio.File]()
	m := make(map[string]bool, t.NumMethod())
	for i := range t.NumMethod() {
		m[t.Method(i).Name] = true
	}
	return m
}()

// opens are the calls rewritten, by package path and name, with their
// replacement in package diskio.
var opens = map[[2]string]string{
	{"os", "Open"}:               "Open",
	{"os", "OpenFile"}:           "OpenFile",
	{"os", "Create"}:             "Create",
	{"os", "CreateTemp"}:         "CreateTemp",
	{"io/ioutil", "TempFile"}:    "CreateTemp",
	{"os", "OpenInRoot"}:         "OpenInRoot",
	{"os", "OpenFile (a value)"}: "OpenFileFunc()",
}

// A site is one open of package os, or os.OpenFile used as a value.
type site struct {
	fun  *ast.SelectorExpr // os.Open in os.Open(name), or the value os.OpenFile
	repl string            // what replaces Sel: "Open", "OpenFileFunc()", ...
}

// A reason is why a group stays on *os.File.
type reason struct {
	pos token.Pos
	why string
}

// state is one run's union-find over the places that share a type: keys
// are *site and types.Object (variables, fields, parameters, results; a
// function-typed variable stands for its file result).
type state struct {
	pass    *analysis.Pass
	parent  map[any]any
	reasons map[any][]reason // by root
	sites   []*site
	// typeEdits are the *os.File type expressions owned by each place:
	// the os.File selector to replace.
	typeEdits map[any][]*ast.SelectorExpr
	handled   map[ast.Expr]bool
}

func (s *state) find(x any) any {
	for {
		p, ok := s.parent[x]
		if !ok || p == x {
			return x
		}
		if gp, ok := s.parent[p]; ok {
			s.parent[x] = gp
		}
		x = p
	}
}

func (s *state) union(a, b any) {
	ra, rb := s.find(a), s.find(b)
	if ra == rb {
		return
	}
	s.parent[ra] = rb
	if r := s.reasons[ra]; len(r) > 0 {
		s.reasons[rb] = append(s.reasons[rb], r...)
		delete(s.reasons, ra)
	}
}

func (s *state) poison(x any, pos token.Pos, format string, args ...any) {
	r := s.find(x)
	s.parent[r] = r
	s.reasons[r] = append(s.reasons[r], reason{pos, fmt.Sprintf(format, args...)})
}

func run(pass *analysis.Pass) (any, error) {
	if skipNonTestVariant(pass) || diskioItself(pass.Pkg.Path()) {
		return nil, nil
	}
	s := &state{
		pass:      pass,
		parent:    map[any]any{},
		reasons:   map[any][]reason{},
		typeEdits: map[any][]*ast.SelectorExpr{},
		handled:   map[ast.Expr]bool{},
	}
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	s.declarations(ins)
	s.flows(ins)
	s.leftovers(ins)
	s.report()
	return nil, nil
}
