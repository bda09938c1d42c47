package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
)

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
