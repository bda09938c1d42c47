package analyzer

import (
	"go/types"
)

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
