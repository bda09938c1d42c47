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
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

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

// ---- types ----

// isOSFile reports whether t is *os.File.
func isOSFile(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "os" && n.Obj().Name() == "File"
}

// fileResult returns the index of the one *os.File result of an unnamed
// function type whose parameters mention no os.File (an OpenFile hook),
// or -1.
func fileResult(t types.Type) int {
	sig, ok := types.Unalias(t).(*types.Signature)
	if !ok || sig.Recv() != nil || sig.TypeParams() != nil {
		return -1
	}
	for i := range sig.Params().Len() {
		if mentionsOSFile(sig.Params().At(i).Type()) {
			return -1
		}
	}
	idx := -1
	for i := range sig.Results().Len() {
		rt := sig.Results().At(i).Type()
		switch {
		case isOSFile(rt) && idx < 0:
			idx = i
		case mentionsOSFile(rt):
			return -1
		}
	}
	return idx
}

// relevant reports whether values of type t are places of a group: a
// *os.File, or an OpenFile hook's function type.
func relevant(t types.Type) bool { return t != nil && (isOSFile(t) || fileResult(t) >= 0) }

// mentionsOSFile reports whether os.File appears anywhere in t.
func mentionsOSFile(t types.Type) bool { return mentions(t, map[types.Type]bool{}) }

func mentions(t types.Type, seen map[types.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		// A named type is its name: what it is made of is written
		// where it is declared.
		o := t.Obj()
		return o.Pkg() != nil && o.Pkg().Path() == "os" && o.Name() == "File"
	case *types.Pointer:
		return mentions(t.Elem(), seen)
	case *types.Slice:
		return mentions(t.Elem(), seen)
	case *types.Array:
		return mentions(t.Elem(), seen)
	case *types.Map:
		return mentions(t.Key(), seen) || mentions(t.Elem(), seen)
	case *types.Chan:
		return mentions(t.Elem(), seen)
	case *types.Signature:
		return mentions(t.Params(), seen) || mentions(t.Results(), seen)
	case *types.Tuple:
		for i := range t.Len() {
			if mentions(t.At(i).Type(), seen) {
				return true
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if mentions(t.Field(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

// implements reports whether *diskio.File has every method of interface
// t (*os.File, where the program compiles, has them with the same
// signatures), and the first it lacks.
func implements(t types.Type) (bool, string) {
	it, ok := t.Underlying().(*types.Interface)
	if !ok {
		return false, ""
	}
	for i := range it.NumMethods() {
		if m := it.Method(i); !diskioMethods[m.Name()] {
			return false, m.Name()
		}
	}
	return true, ""
}

// ---- declarations: the *os.File type expressions and their owners ----

// declarations finds every *os.File written in a declaration the
// rewrite can change (a variable's, field's, parameter's or result's
// type, or an OpenFile hook's result) and records the place that owns it.
func (s *state) declarations(ins *inspector.Inspector) {
	info := s.pass.TypesInfo
	// The methods an interface of the package's names: a method of the
	// package's types by one of these names may be what implements it.
	ifaceMethods := map[string]bool{}
	ins.Preorder([]ast.Node{(*ast.InterfaceType)(nil)}, func(n ast.Node) {
		for _, m := range n.(*ast.InterfaceType).Methods.List {
			for _, name := range m.Names {
				ifaceMethods[name.Name] = true
			}
		}
	})
	ins.Preorder([]ast.Node{(*ast.FuncDecl)(nil), (*ast.FuncLit)(nil), (*ast.StructType)(nil), (*ast.ValueSpec)(nil)}, func(n ast.Node) {
		switch n := n.(type) {
		case *ast.FuncDecl:
			fn, _ := info.Defs[n.Name].(*types.Func)
			if fn == nil {
				return
			}
			sig := fn.Signature()
			exported := n.Name.IsExported() && (n.Recv == nil || receiverExported(sig))
			s.fields(n.Type.Params, sig.Params(), exported, n.Name.Name+"'s parameter")
			s.fields(n.Type.Results, sig.Results(), exported, n.Name.Name+"'s result")
			if n.Recv != nil && (n.Name.IsExported() || ifaceMethods[n.Name.Name]) {
				// The method may be what makes its type implement
				// an interface, which wants *os.File.
				s.poisonSig(sig, n.Pos(), "it is a parameter or result of the method %s, which an interface may require", n.Name.Name)
			}
		case *ast.FuncLit:
			sig, _ := info.TypeOf(n).(*types.Signature)
			if sig == nil {
				return
			}
			s.fields(n.Type.Params, sig.Params(), false, "a function literal's parameter")
			s.fields(n.Type.Results, sig.Results(), false, "a function literal's result")
		case *ast.StructType:
			st, _ := info.TypeOf(n).(*types.Struct)
			for i := range st.NumFields() {
				if f := st.Field(i); f.Embedded() && relevant(f.Type()) {
					// Its methods are promoted: the struct
					// itself would change what it implements.
					s.poison(f, f.Pos(), "it is embedded in a struct")
				}
			}
			for _, f := range n.Fields.List {
				if len(f.Names) == 0 {
					continue
				}
				var objs []types.Object
				exported := false
				for _, name := range f.Names {
					if o := info.Defs[name]; o != nil {
						objs = append(objs, o)
						exported = exported || name.IsExported()
					}
				}
				s.owned(f.Type, objs, exported, "field")
			}
		case *ast.ValueSpec:
			if n.Type == nil {
				return
			}
			var objs []types.Object
			exported := false
			for _, name := range n.Names {
				if o := info.Defs[name]; o != nil {
					objs = append(objs, o)
					exported = exported || (name.IsExported() && o.Parent() == s.pass.Pkg.Scope())
				}
			}
			s.owned(n.Type, objs, exported, "variable")
		}
	})
}

func receiverExported(sig *types.Signature) bool {
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Exported()
}

// poisonSig poisons the *os.File parameters and results of sig.
func (s *state) poisonSig(sig *types.Signature, pos token.Pos, format string, args ...any) {
	for _, tup := range []*types.Tuple{sig.Params(), sig.Results()} {
		for i := range tup.Len() {
			if v := tup.At(i); relevant(v.Type()) {
				s.poison(v, pos, format, args...)
			}
		}
	}
}

// fields records the owners of a parameter or result list's types: the
// tuple's variables, in order.
func (s *state) fields(list *ast.FieldList, tup *types.Tuple, exported bool, what string) {
	if list == nil {
		return
	}
	i := 0
	for _, f := range list.List {
		n := max(len(f.Names), 1)
		var objs []types.Object
		for j := 0; j < n && i+j < tup.Len(); j++ {
			objs = append(objs, tup.At(i+j))
		}
		i += n
		s.owned(f.Type, objs, exported, what)
	}
}

// owned records that the type expression typ, declared for objs (which
// therefore share one type), is theirs to rewrite when it is *os.File or
// an OpenFile hook's function type.
func (s *state) owned(typ ast.Expr, objs []types.Object, exported bool, what string) {
	if len(objs) == 0 || !relevant(s.pass.TypesInfo.TypeOf(typ)) {
		return
	}
	sel := osFileSelector(s.pass.TypesInfo, typ)
	if sel == nil {
		s.poison(objs[0], typ.Pos(), "its type %s is not written *os.File here (an alias or a named type)", types.ExprString(typ))
		return
	}
	for _, o := range objs[1:] {
		s.union(objs[0], o)
	}
	s.typeEdits[objs[0]] = append(s.typeEdits[objs[0]], sel)
	if exported && !rewriteExported {
		desc := what
		if name := objs[0].Name(); name != "" {
			desc += " " + name
		}
		s.poison(objs[0], typ.Pos(), "it is in the package's exported API (%s; -exported rewrites it)", desc)
	}
}

// osFileSelector returns the os.File in typ when typ is *os.File, or a
// function type whose one *os.File result is written so.
func osFileSelector(info *types.Info, typ ast.Expr) *ast.SelectorExpr {
	typ = ast.Unparen(typ)
	if ft, ok := typ.(*ast.FuncType); ok {
		if ft.Results == nil {
			return nil
		}
		for _, f := range ft.Results.List {
			if sel := osFileSelector(info, f.Type); sel != nil {
				return sel
			}
		}
		return nil
	}
	star, ok := typ.(*ast.StarExpr)
	if !ok {
		return nil
	}
	sel, ok := ast.Unparen(star.X).(*ast.SelectorExpr)
	if !ok || !isOSFile(info.TypeOf(typ)) {
		return nil
	}
	return sel
}

// ---- flows ----

// ref is the place an expression of a relevant type stands for, or a
// description of where its value comes from when that is no place of
// the package's (foreign), or neither for nil.
func (s *state) ref(e ast.Expr) (place any, foreign string) {
	info := s.pass.TypesInfo
	e = ast.Unparen(e)
	if tv, ok := info.Types[e]; ok && tv.IsNil() {
		return nil, ""
	}
	switch e := e.(type) {
	case *ast.Ident:
		return s.objRef(info.ObjectOf(e), e.Name)
	case *ast.SelectorExpr:
		if st := s.siteOf(e, false); st != nil {
			return st, ""
		}
		if sel, ok := info.Selections[e]; ok {
			if sel.Kind() == types.FieldVal {
				if sel.Obj().Pkg() == s.pass.Pkg {
					return sel.Obj(), ""
				}
				return nil, "the field " + types.ExprString(e) + " of package " + sel.Obj().Pkg().Path()
			}
			return nil, "the method value " + types.ExprString(e)
		}
		return s.objRef(info.Uses[e.Sel], types.ExprString(e))
	case *ast.CallExpr:
		return s.resultRef(e, 0)
	case *ast.FuncLit:
		sig, _ := info.TypeOf(e).(*types.Signature)
		if i := fileResult(sig); i >= 0 {
			return sig.Results().At(i), ""
		}
		return nil, "a function literal"
	case *ast.TypeAssertExpr:
		return nil, "a type assertion"
	case *ast.IndexExpr:
		return nil, "an element of " + types.ExprString(e.X)
	}
	return nil, types.ExprString(e)
}

// objRef is ref for an object named by an identifier or qualified name.
func (s *state) objRef(o types.Object, name string) (any, string) {
	switch o := o.(type) {
	case *types.Var:
		if o.Pkg() == s.pass.Pkg {
			return o, ""
		}
		return nil, name
	case *types.Func:
		if o.Pkg() == s.pass.Pkg {
			sig := o.Signature()
			if i := fileResult(sig); i >= 0 {
				return sig.Results().At(i), ""
			}
		}
		return nil, "the function value " + name
	}
	return nil, name
}

// resultRef is the place of result i of call.
func (s *state) resultRef(call *ast.CallExpr, i int) (any, string) {
	info := s.pass.TypesInfo
	fun := ast.Unparen(call.Fun)
	if sel, ok := fun.(*ast.SelectorExpr); ok {
		if st := s.siteOf(sel, true); st != nil {
			if i == 0 {
				return st, ""
			}
			return nil, ""
		}
	}
	if tv, ok := info.Types[fun]; ok && tv.IsType() {
		return nil, "a conversion to " + types.ExprString(fun)
	}
	if fn := calleeFunc(info, fun); fn != nil {
		if fn.Pkg() == s.pass.Pkg && fn.Signature().TypeParams() == nil {
			return fn.Signature().Results().At(i), ""
		}
		name := fn.Name()
		if fn.Pkg() != nil {
			name = fn.Pkg().Name() + "." + name
		}
		return nil, "the result of " + name
	}
	// A call of a function value: an OpenFile hook of the package's.
	if p, foreign := s.ref(fun); p != nil {
		if v, ok := p.(*types.Var); ok && fileResult(v.Type()) == i {
			return v, ""
		}
	} else if foreign != "" {
		return nil, "the result of " + foreign
	}
	return nil, "the result of " + types.ExprString(fun)
}

// calleeFunc is the function or method a call's Fun names statically.
func calleeFunc(info *types.Info, fun ast.Expr) *types.Func {
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		fn, _ := info.Uses[f].(*types.Func)
		return fn
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[f]; ok {
			if sel.Kind() == types.MethodVal {
				fn, _ := sel.Obj().(*types.Func)
				if fn != nil && types.IsInterface(sel.Recv()) {
					return nil // dynamic
				}
				return fn
			}
			return nil
		}
		fn, _ := info.Uses[f.Sel].(*types.Func)
		return fn
	case *ast.IndexExpr: // an instantiation
		return calleeFunc(info, f.X)
	}
	return nil
}

// siteOf returns the site of sel, a qualified name of package os (or
// io/ioutil) that the rewrite replaces: called (an open), or os.OpenFile
// as a value. Sites are made once per selector.
func (s *state) siteOf(sel *ast.SelectorExpr, called bool) *site {
	fn, ok := s.pass.TypesInfo.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return nil
	}
	key := [2]string{fn.Pkg().Path(), fn.Name()}
	if !called {
		if key != [2]string{"os", "OpenFile"} {
			return nil
		}
		key[1] = "OpenFile (a value)"
	}
	repl, ok := opens[key]
	if !ok {
		return nil
	}
	for _, st := range s.sites {
		if st.fun == sel {
			return st
		}
	}
	st := &site{fun: sel, repl: repl}
	s.sites = append(s.sites, st)
	s.parent[st] = st
	return st
}

// flow says that the value of the expression from goes to the place to
// (or, to being foreign, to what toDesc names): from and to must then
// share a type.
func (s *state) flow(from ast.Expr, fromPlace any, fromForeign string, to any, toDesc string, pos token.Pos) {
	switch {
	case fromPlace == nil && fromForeign == "":
		// nil: any type takes it
	case fromPlace != nil && to != nil:
		s.union(fromPlace, to)
	case fromPlace != nil:
		s.poison(fromPlace, pos, "it goes to %s", toDesc)
	case to != nil:
		s.poison(to, pos, "it also holds %s", fromForeign)
	}
}

// dest is the place an assignment's left side is, or its description.
func (s *state) dest(lhs ast.Expr) (any, string) {
	lhs = ast.Unparen(lhs)
	if id, ok := lhs.(*ast.Ident); ok && id.Name == "_" {
		return nil, ""
	}
	p, foreign := s.ref(lhs)
	return p, foreign
}

// assign handles the value of rhs (or result i of a multi-value rhs call)
// going to lhs.
func (s *state) assign(lhs ast.Expr, lhsType types.Type, rhs ast.Expr, multi bool, i int) {
	info := s.pass.TypesInfo
	var rt types.Type
	if _, ok := ast.Unparen(rhs).(*ast.CallExpr); multi && !ok {
		// v, ok := m[k], x.(T) or <-c: a value of no place of ours.
		s.handled[ast.Unparen(rhs)] = true
		if lhs != nil {
			s.handled[ast.Unparen(lhs)] = true
			if relevant(lhsType) {
				if p, _ := s.dest(lhs); p != nil {
					s.poison(p, rhs.Pos(), "it also holds %s", types.ExprString(rhs))
				}
			}
		}
		return
	}
	if multi {
		s.handled[ast.Unparen(rhs)] = true
		if tup, ok := info.TypeOf(rhs).(*types.Tuple); ok && i < tup.Len() {
			rt = tup.At(i).Type()
		}
	} else {
		rt = info.TypeOf(rhs)
		s.handled[ast.Unparen(rhs)] = true
	}
	if lhs != nil {
		s.handled[ast.Unparen(lhs)] = true
	}
	if !relevant(rt) && !relevant(lhsType) {
		return
	}
	var fp any
	var ff string
	if multi {
		fp, ff = s.resultRef(ast.Unparen(rhs).(*ast.CallExpr), i)
	} else {
		fp, ff = s.ref(rhs)
	}
	if lhsType != nil && types.IsInterface(lhsType) {
		s.toInterface(fp, lhsType, rhs.Pos(), "")
		return
	}
	if lhs == nil {
		return
	}
	tp, tf := s.dest(lhs)
	if tp == nil && tf == "" {
		return // _
	}
	s.flow(rhs, fp, ff, tp, tf, rhs.Pos())
}

// toInterface checks a file converted to interface type t.
func (s *state) toInterface(p any, t types.Type, pos token.Pos, where string) {
	if p == nil {
		return
	}
	if ok, missing := implements(t); !ok {
		s.poison(p, pos, "it is used as %s%s, which *diskio.File does not implement (no %s)", types.TypeString(t, types.RelativeTo(s.pass.Pkg)), where, missing)
	}
}

func (s *state) flows(ins *inspector.Inspector) {
	info := s.pass.TypesInfo
	var sigs []*types.Signature // enclosing functions, innermost last
	ins.Nodes(nil, func(n ast.Node, push bool) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if fn, ok := info.Defs[n.Name].(*types.Func); ok {
				if push {
					sigs = append(sigs, fn.Signature())
				} else {
					sigs = sigs[:len(sigs)-1]
				}
			}
		case *ast.FuncLit:
			if sig, ok := info.TypeOf(n).(*types.Signature); ok {
				if push {
					sigs = append(sigs, sig)
				} else {
					sigs = sigs[:len(sigs)-1]
				}
			}
		}
		if !push {
			return true
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok != token.ASSIGN && n.Tok != token.DEFINE {
				return true
			}
			if len(n.Lhs) > 1 && len(n.Rhs) == 1 {
				for i, l := range n.Lhs {
					s.assign(l, info.TypeOf(l), n.Rhs[0], true, i)
				}
				return true
			}
			for i := range min(len(n.Lhs), len(n.Rhs)) {
				s.assign(n.Lhs[i], info.TypeOf(n.Lhs[i]), n.Rhs[i], false, 0)
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				o := info.Defs[name]
				if o == nil {
					continue
				}
				switch {
				case len(n.Values) == len(n.Names):
					s.assign(name, o.Type(), n.Values[i], false, 0)
				case len(n.Values) == 1:
					s.assign(name, o.Type(), n.Values[0], true, i)
				}
			}
		case *ast.ReturnStmt:
			if len(sigs) == 0 {
				return true
			}
			res := sigs[len(sigs)-1].Results()
			if len(n.Results) == 1 && res.Len() > 1 {
				if call, ok := ast.Unparen(n.Results[0]).(*ast.CallExpr); ok {
					s.handled[call] = true
					for i := range res.Len() {
						s.returnValue(res.At(i), call, true, i)
					}
				}
				return true
			}
			for i, r := range n.Results {
				if i < res.Len() {
					s.returnValue(res.At(i), r, false, 0)
				}
			}
		case *ast.CallExpr:
			s.call(n)
		case *ast.SelectorExpr:
			if isOSFile(info.TypeOf(n.X)) {
				if sel, ok := info.Selections[n]; ok && sel.Kind() == types.MethodVal {
					s.handled[ast.Unparen(n.X)] = true
					if !diskioMethods[n.Sel.Name] {
						if p, _ := s.ref(n.X); p != nil {
							s.poison(p, n.Sel.Pos(), "it calls (*os.File).%s, which *diskio.File lacks", n.Sel.Name)
						}
					}
				}
			}
		case *ast.CompositeLit:
			s.compositeLit(n)
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (relevant(info.TypeOf(n.X)) || relevant(info.TypeOf(n.Y))) {
				s.handled[ast.Unparen(n.X)] = true
				s.handled[ast.Unparen(n.Y)] = true
				xp, xf := s.ref(n.X)
				yp, yf := s.ref(n.Y)
				switch {
				case xp != nil && yp != nil:
					s.union(xp, yp)
				case xp != nil && yf != "":
					s.poison(xp, n.Pos(), "it is compared with %s", yf)
				case yp != nil && xf != "":
					s.poison(yp, n.Pos(), "it is compared with %s", xf)
				}
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if e != nil && relevant(info.TypeOf(e)) {
					s.handled[ast.Unparen(e)] = true
					if p, _ := s.dest(e); p != nil {
						s.poison(p, e.Pos(), "it ranges over %s", types.ExprString(n.X))
					}
				}
			}
		case *ast.CaseClause:
			if o, ok := info.Implicits[n].(*types.Var); ok && relevant(o.Type()) {
				s.poison(o, n.Pos(), "it comes from a type switch")
			}
		}
		return true
	})
}

// returnValue handles a returned value going to the result variable res.
func (s *state) returnValue(res *types.Var, e ast.Expr, multi bool, i int) {
	if !multi {
		s.handled[ast.Unparen(e)] = true
	}
	var fp any
	var ff string
	var rt types.Type
	if multi {
		fp, ff = s.resultRef(ast.Unparen(e).(*ast.CallExpr), i)
		if tup, ok := s.pass.TypesInfo.TypeOf(e).(*types.Tuple); ok && i < tup.Len() {
			rt = tup.At(i).Type()
		}
	} else {
		rt = s.pass.TypesInfo.TypeOf(e)
		fp, ff = s.ref(e)
	}
	if !relevant(rt) {
		return
	}
	if types.IsInterface(res.Type()) {
		s.toInterface(fp, res.Type(), e.Pos(), " (a result)")
		return
	}
	s.flow(e, fp, ff, res, "", e.Pos())
}

// exempt lists the sinks that take an io.Reader or io.Writer but treat
// an *os.File apart: a process's standard streams, which a child gets as
// they are when they are *os.File and through a pipe and a copying
// goroutine otherwise.
var exempt = map[string]string{
	"os/exec.Cmd.Stdin":  "a process's stdin (exec.Cmd.Stdin)",
	"os/exec.Cmd.Stdout": "a process's stdout (exec.Cmd.Stdout)",
	"os/exec.Cmd.Stderr": "a process's stderr (exec.Cmd.Stderr)",
}

// call handles a call's arguments.
func (s *state) call(call *ast.CallExpr) {
	info := s.pass.TypesInfo
	fun := ast.Unparen(call.Fun)
	if tv, ok := info.Types[fun]; ok && tv.IsType() {
		// A conversion.
		if len(call.Args) == 1 && relevant(info.TypeOf(call.Args[0])) {
			s.handled[ast.Unparen(call.Args[0])] = true
			if p, _ := s.ref(call.Args[0]); p != nil {
				if types.IsInterface(tv.Type) {
					s.toInterface(p, tv.Type, call.Pos(), "")
				} else {
					s.poison(p, call.Pos(), "it is converted to %s", types.ExprString(fun))
				}
			}
		}
		return
	}
	if _, ok := info.Types[fun]; ok {
		if b, ok := info.Uses[identOf(fun)].(*types.Builtin); ok {
			for _, a := range call.Args {
				if relevant(info.TypeOf(a)) {
					s.handled[ast.Unparen(a)] = true
					if p, _ := s.ref(a); p != nil {
						s.poison(p, a.Pos(), "it is passed to %s", b.Name())
					}
				}
			}
			return
		}
	}
	sig, ok := info.TypeOf(fun).(*types.Signature)
	if !ok {
		return
	}
	fn := calleeFunc(info, fun)
	local := fn != nil && fn.Pkg() == s.pass.Pkg && fn.Signature().TypeParams() == nil
	if fn != nil && local {
		sig = fn.Signature()
	}
	name := types.ExprString(fun)
	if fn != nil && fn.Pkg() != nil && fn.Pkg() != s.pass.Pkg {
		name = fn.FullName()
	}
	params := sig.Params()
	if len(call.Args) == 1 && params.Len() > 1 {
		// f(g()): g's results are f's arguments.
		if inner, ok := ast.Unparen(call.Args[0]).(*ast.CallExpr); ok {
			s.handled[inner] = true
			for i := range params.Len() {
				if relevant(params.At(i).Type()) || types.IsInterface(params.At(i).Type()) {
					fp, ff := s.resultRef(inner, i)
					s.argument(fp, ff, params.At(i), local, name, call.Args[0].Pos())
				}
			}
			return
		}
	}
	for i, a := range call.Args {
		if !relevant(info.TypeOf(a)) {
			continue
		}
		s.handled[ast.Unparen(a)] = true
		var pv *types.Var
		switch {
		case i < params.Len()-1 || (i < params.Len() && !sig.Variadic()):
			pv = params.At(i)
		case sig.Variadic() && call.Ellipsis == token.NoPos:
			last := params.At(params.Len() - 1)
			elem := last.Type().(*types.Slice).Elem()
			pv = types.NewParam(last.Pos(), last.Pkg(), last.Name(), elem)
			local = false // the variadic slice's element: not a place of ours
		default:
			continue
		}
		fp, ff := s.ref(a)
		s.argument(fp, ff, pv, local, name, a.Pos())
	}
}

func identOf(e ast.Expr) *ast.Ident {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return e
	case *ast.SelectorExpr:
		return e.Sel
	}
	return nil
}

// argument handles an argument going to parameter pv of a call of name.
func (s *state) argument(fp any, ff string, pv *types.Var, local bool, name string, pos token.Pos) {
	switch {
	case types.IsInterface(pv.Type()):
		s.toInterface(fp, pv.Type(), pos, " (passed to "+name+")")
	case local:
		s.flow(nil, fp, ff, pv, "", pos)
	case fp != nil:
		s.poison(fp, pos, "it is passed to %s, which wants %s", name, types.TypeString(pv.Type(), types.RelativeTo(s.pass.Pkg)))
	}
}

// compositeLit handles the values of a struct literal's fields, and
// poisons files put in slices, arrays and maps.
func (s *state) compositeLit(lit *ast.CompositeLit) {
	info := s.pass.TypesInfo
	t := info.TypeOf(lit)
	if t == nil {
		return
	}
	st, isStruct := t.Underlying().(*types.Struct)
	if p, ok := t.Underlying().(*types.Pointer); ok {
		st, isStruct = p.Elem().Underlying().(*types.Struct)
	}
	for i, e := range lit.Elts {
		var field *types.Var
		val := e
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			val = kv.Value
			if isStruct {
				if id, ok := kv.Key.(*ast.Ident); ok {
					field, _ = info.Uses[id].(*types.Var)
				}
			}
		} else if isStruct && i < st.NumFields() {
			field = st.Field(i)
		}
		vt := info.TypeOf(val)
		if !relevant(vt) && (field == nil || !relevant(field.Type())) {
			continue
		}
		s.handled[ast.Unparen(val)] = true
		fp, ff := s.ref(val)
		switch {
		case !isStruct:
			if fp != nil {
				s.poison(fp, val.Pos(), "it is an element of a %s", types.TypeString(t, types.RelativeTo(s.pass.Pkg)))
			}
		case field == nil:
		case types.IsInterface(field.Type()):
			if why, ok := exempt[fieldKey(t, field)]; ok && fp != nil {
				s.poison(fp, val.Pos(), "it is used as %s", why)
				continue
			}
			s.toInterface(fp, field.Type(), val.Pos(), " (the field "+field.Name()+")")
		case field.Pkg() == s.pass.Pkg:
			s.flow(val, fp, ff, field, "", val.Pos())
		case fp != nil:
			s.poison(fp, val.Pos(), "it is the field %s of %s, which wants *os.File", field.Name(), types.TypeString(t, types.RelativeTo(s.pass.Pkg)))
		}
	}
}

// fieldKey names a field as exempt does: "path.Type.Field".
func fieldKey(t types.Type, f *types.Var) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return ""
	}
	return n.Obj().Pkg().Path() + "." + n.Obj().Name() + "." + f.Name()
}

// leftovers poisons the places of every expression of a relevant type
// used where no rule above followed it: whatever the rewrite cannot see
// through stays *os.File. It also checks assignments to exempt fields.
func (s *state) leftovers(ins *inspector.Inspector) {
	info := s.pass.TypesInfo
	ins.WithStack(nil, func(n ast.Node, push bool, stack []ast.Node) bool {
		if !push {
			return true
		}
		e, ok := n.(ast.Expr)
		if !ok {
			return true
		}
		if as, ok := parentOf(stack).(*ast.AssignStmt); ok {
			// A file assigned to an exempt field (cmd.Stdout = f).
			for i, l := range as.Lhs {
				if l == e && i < len(as.Rhs) {
					if sel, ok := ast.Unparen(l).(*ast.SelectorExpr); ok {
						if sv, ok := info.Selections[sel]; ok && sv.Kind() == types.FieldVal {
							if why, ok := exempt[fieldKey(sv.Recv(), sv.Obj().(*types.Var))]; ok {
								if p, _ := s.ref(as.Rhs[i]); p != nil && relevant(info.TypeOf(as.Rhs[i])) {
									s.poison(p, as.Rhs[i].Pos(), "it is used as %s", why)
								}
							}
						}
					}
				}
			}
		}
		tv, ok := info.Types[e]
		if !ok || !tv.IsValue() || !relevant(tv.Type) || s.handled[e] {
			return true
		}
		if _, ok := e.(*ast.ParenExpr); ok {
			return true
		}
		switch p := parentOf(stack).(type) {
		case *ast.ParenExpr:
			if s.handled[p] {
				return true
			}
		case *ast.SelectorExpr:
			if p.Sel == e {
				return true // the name in x.f: its selector expression is the use
			}
		case *ast.KeyValueExpr:
			if p.Key == e {
				return true
			}
		case *ast.CallExpr:
			if p.Fun == e {
				return true // a hook called: its result is followed
			}
		case *ast.ExprStmt:
			return true // a call whose results are dropped
		case *ast.DeferStmt, *ast.GoStmt:
			return true
		case *ast.FuncDecl, *ast.Field:
			return true
		}
		if id, ok := e.(*ast.Ident); ok && info.Defs[id] != nil {
			return true // a declaration
		}
		if place, _ := s.ref(e); place != nil {
			s.poison(place, e.Pos(), "it is used in %s", describe(parentOf(stack)))
		}
		return true
	})
}

func parentOf(stack []ast.Node) ast.Node {
	if len(stack) < 2 {
		return nil
	}
	return stack[len(stack)-2]
}

func describe(n ast.Node) string {
	switch n := n.(type) {
	case *ast.UnaryExpr:
		if n.Op == token.AND {
			return "&: its address is taken"
		}
		return "a " + n.Op.String() + " expression"
	case *ast.SendStmt:
		return "a send on a channel"
	case *ast.StarExpr:
		return "a dereference"
	case nil:
		return "an unknown place"
	}
	return strings.TrimPrefix(reflect.TypeOf(n).String(), "*ast.")
}

// ---- report ----

type group struct {
	root    any
	sites   []*site
	reasons []reason
}

func (s *state) report() {
	pass := s.pass
	groups := map[any]*group{}
	var order []*group
	for _, st := range s.sites {
		r := s.find(st)
		g := groups[r]
		if g == nil {
			g = &group{root: r, reasons: s.reasons[r]}
			groups[r] = g
			order = append(order, g)
		}
		g.sites = append(g.sites, st)
	}
	var edits []analysis.TextEdit
	var moved []*site
	files := map[*ast.File]bool{}
	for _, g := range order {
		if len(g.reasons) > 0 {
			sort.Slice(g.reasons, func(i, j int) bool { return g.reasons[i].pos < g.reasons[j].pos })
			r := g.reasons[0]
			more := ""
			if len(g.reasons) > 1 {
				more = fmt.Sprintf(" (and %d more reasons)", len(g.reasons)-1)
			}
			for _, st := range g.sites {
				pass.Report(analysis.Diagnostic{
					Pos:     st.fun.Pos(),
					End:     st.fun.End(),
					Message: fmt.Sprintf("%s stays on *os.File: %s at %s%s", siteName(st), r.why, s.where(r.pos), more),
				})
			}
			continue
		}
		for _, st := range g.sites {
			f := s.fileOf(st.fun.Pos())
			name := s.diskioName(f)
			if name == "" {
				pass.Report(analysis.Diagnostic{Pos: st.fun.Pos(), End: st.fun.End(),
					Message: siteName(st) + " stays on *os.File: the file already uses the name diskio for something else"})
				continue
			}
			files[f] = true
			edits = append(edits, analysis.TextEdit{Pos: st.fun.Pos(), End: st.fun.End(), NewText: []byte(name + "." + st.repl)})
			moved = append(moved, st)
		}
	}
	if len(moved) == 0 {
		return
	}
	// The declared types of every group moved.
	for owner, sels := range s.typeEdits {
		r := s.find(owner)
		g := groups[r]
		if g == nil || len(g.reasons) > 0 {
			continue
		}
		for _, sel := range sels {
			f := s.fileOf(sel.Pos())
			name := s.diskioName(f)
			if name == "" {
				continue
			}
			files[f] = true
			edits = append(edits, analysis.TextEdit{Pos: sel.Pos(), End: sel.End(), NewText: []byte(name + ".File")})
		}
	}
	for f := range files {
		if e, ok := addImport(f); ok {
			edits = append(edits, e)
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].Pos < edits[j].Pos })
	edits = dedupe(edits)
	first := moved[0]
	for i, st := range moved {
		d := analysis.Diagnostic{Pos: st.fun.Pos(), End: st.fun.End()}
		if i == 0 {
			d.Message = fmt.Sprintf("%s can be %s.%s: the file stays within what *diskio.File serves", siteName(st), s.diskioName(s.fileOf(st.fun.Pos())), st.repl)
			if len(moved) > 1 {
				d.Message += fmt.Sprintf(" (the fix moves the package's %d opens)", len(moved))
			}
			d.SuggestedFixes = []analysis.SuggestedFix{{Message: "Move the package's files to diskio", TextEdits: edits}}
		} else {
			d.Message = fmt.Sprintf("%s can be %s.%s (moved by the fix at %s)", siteName(st), s.diskioName(s.fileOf(st.fun.Pos())), st.repl, s.where(first.fun.Pos()))
		}
		pass.Report(d)
	}
}

// where is pos as file:line:column, the file's base name only.
func (s *state) where(pos token.Pos) string {
	p := s.pass.Fset.Position(pos)
	return fmt.Sprintf("%s:%d:%d", filepath.Base(p.Filename), p.Line, p.Column)
}

func siteName(st *site) string {
	if st.repl == "OpenFileFunc()" {
		return "the value os.OpenFile"
	}
	return types.ExprString(st.fun)
}

func dedupe(edits []analysis.TextEdit) []analysis.TextEdit {
	out := edits[:0]
	for i, e := range edits {
		if i > 0 && e.Pos == edits[i-1].Pos && e.End == edits[i-1].End && string(e.NewText) == string(edits[i-1].NewText) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func (s *state) fileOf(pos token.Pos) *ast.File {
	for _, f := range s.pass.Files {
		if f.FileStart <= pos && pos <= f.FileEnd {
			return f
		}
	}
	return nil
}

// diskioName is the name diskio goes by in f: its import's, or "diskio"
// when the file does not import it yet and the name is free; "" when the
// name is taken.
func (s *state) diskioName(f *ast.File) string {
	for _, imp := range f.Imports {
		if imp.Path.Value == `"`+DiskioPath+`"` {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "diskio"
		}
	}
	if s.pass.Pkg.Scope().Lookup("diskio") != nil {
		return ""
	}
	for _, imp := range f.Imports {
		if (imp.Name != nil && imp.Name.Name == "diskio") || (imp.Name == nil && strings.HasSuffix(imp.Path.Value, `/diskio"`)) {
			return ""
		}
	}
	return "diskio"
}

// addImport returns the edit that imports diskio into f, unless it does.
func addImport(f *ast.File) (analysis.TextEdit, bool) {
	for _, imp := range f.Imports {
		if imp.Path.Value == `"`+DiskioPath+`"` {
			return analysis.TextEdit{}, false
		}
	}
	line := `"` + DiskioPath + `"`
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		if gd.Lparen.IsValid() {
			// A group of its own after the last spec; the driver's
			// gofmt keeps it apart, as goimports places third-party
			// imports.
			return analysis.TextEdit{Pos: gd.Rparen, End: gd.Rparen, NewText: []byte("\n\t" + line + "\n")}, true
		}
		// import "os": made a group, the new import a group of its own.
		spec := gd.Specs[0].(*ast.ImportSpec)
		old := spec.Path.Value
		if spec.Name != nil {
			old = spec.Name.Name + " " + old
		}
		return analysis.TextEdit{Pos: gd.Pos(), End: gd.End(), NewText: []byte("import (\n\t" + old + "\n\n\t" + line + "\n)")}, true
	}
	return analysis.TextEdit{Pos: f.Name.End(), End: f.Name.End(), NewText: []byte("\n\nimport " + line)}, true
}

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
