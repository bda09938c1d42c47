package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/inspector"
)

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
