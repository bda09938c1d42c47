package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"golang.org/x/tools/go/ast/inspector"
)

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
func (s *state) flow(fromPlace any, fromForeign string, to any, toDesc string, pos token.Pos) {
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
	s.flow(fp, ff, tp, tf, rhs.Pos())
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
	s.flow(fp, ff, res, "", e.Pos())
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
		s.flow(fp, ff, pv, "", pos)
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
			s.flow(fp, ff, field, "", val.Pos())
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
