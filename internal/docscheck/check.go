package docscheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// A Problem is a quoted name or a link that does not resolve.
type Problem struct {
	Doc  string // the document, relative to the repository
	Line int
	Text string // the quoted text or the link's target
	Why  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: `%s`: %s", p.Doc, p.Line, p.Text, p.Why) }

// span is one backquoted piece of a document, with the package directory
// the section it stands in is about ("" for the root package, or none).
type span struct {
	text    string
	line    int
	ctxDir  string
	haveCtx bool
}

var (
	fenceRE   = regexp.MustCompile("(?ms)^[ \t]*```.*?^[ \t]*```[^\n]*$")
	codeRE    = regexp.MustCompile("`([^`]+)`")
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	identRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	capsRE    = regexp.MustCompile(`^[A-Z][A-Z0-9_]*\*?$`)
	callRE    = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_./]*)\(([^()]*)\)((\.[A-Za-z_][A-Za-z0-9_]*)*)$`)
	recvRE    = regexp.MustCompile(`^\(\*?([A-Za-z_][A-Za-z0-9_.]*)\)\.([A-Za-z_][A-Za-z0-9_]*)$`)
	envRE     = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=\S*$`)
	digitsRE  = regexp.MustCompile(`^[0-9]+$`)
	extRE     = regexp.MustCompile(`\.(go|md|py|sh|yml|yaml|json|mod|txt)$`)
	stdPathRE = regexp.MustCompile(`^([a-z0-9]+(/[a-z0-9]+)*)\.([A-Za-z_][A-Za-z0-9_]*)$`)
)

// blank replaces every byte of s[i:j] but newlines with a space, so that
// what follows keeps its line.
func blank(s string, i, j int) string {
	b := []byte(s)
	for k := i; k < j; k++ {
		if b[k] != '\n' {
			b[k] = ' '
		}
	}
	return string(b)
}

// withoutFences returns text with its fenced code blocks blanked.
func withoutFences(text string) string {
	for _, m := range fenceRE.FindAllStringIndex(text, -1) {
		text = blank(text, m[0], m[1])
	}
	return text
}

// spans returns the backquoted pieces of a Markdown text, outside fenced
// blocks, each with the package its section names: a heading that quotes
// a directory of the repository's packages (`sched`), or `diskio` for the
// root, sets it; any other heading clears it. A piece may cross a line
// break, as in Markdown.
func (ix *Index) spans(text string) []span {
	text = withoutFences(text)
	type context struct {
		dir  string
		have bool
	}
	var lines []context // by line, from 0
	cur := context{}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "#") {
			cur = context{}
			for _, m := range codeRE.FindAllStringSubmatch(l, -1) {
				if d, ok := ix.packageDir(m[1]); ok {
					cur = context{d, true}
				}
			}
		}
		lines = append(lines, cur)
	}
	var out []span
	for _, m := range codeRE.FindAllStringSubmatchIndex(text, -1) {
		n := strings.Count(text[:m[0]], "\n")
		out = append(out, span{text: text[m[2]:m[3]], line: n + 1, ctxDir: lines[n].dir, haveCtx: lines[n].have})
	}
	return out
}

// packageDir returns the directory of the repository's package that a
// heading quotes: `diskio` is the root.
func (ix *Index) packageDir(name string) (string, bool) {
	if name == "diskio" {
		return "", true
	}
	if p, ok := ix.byDir[name]; ok && p != nil {
		return name, true
	}
	return "", false
}

// Check returns the problems of the backquoted pieces of the document at
// doc, a slash-separated path relative to the repository.
func (ix *Index) Check(doc string) ([]Problem, error) {
	b, err := os.ReadFile(filepath.Join(ix.root, filepath.FromSlash(doc)))
	if err != nil {
		return nil, err
	}
	return ix.CheckText(doc, string(b)), nil
}

// CheckText is Check of a document's text.
func (ix *Index) CheckText(doc, text string) []Problem {
	var ps []Problem
	for _, s := range ix.spans(text) {
		if why := ix.resolve(s, path.Dir(doc)); why != "" {
			ps = append(ps, Problem{Doc: doc, Line: s.line, Text: s.text, Why: why})
		}
	}
	return ps
}

// CheckLinks returns the problems of the relative links of the Markdown
// document at doc: each must name a file or directory that exists.
func (ix *Index) CheckLinks(doc, text string) []Problem {
	text = withoutFences(text)
	for _, m := range codeRE.FindAllStringIndex(text, -1) {
		text = blank(text, m[0], m[1])
	}
	var ps []Problem
	for _, m := range linkRE.FindAllStringSubmatchIndex(text, -1) {
		target := text[m[2]:m[3]]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		if i := strings.IndexByte(target, '#'); i >= 0 {
			target = target[:i]
		}
		p := path.Join(path.Dir(doc), target)
		if !ix.files[p] && !ix.dirs[p] && p != "." {
			ps = append(ps, Problem{Doc: doc, Line: strings.Count(text[:m[0]], "\n") + 1, Text: text[m[2]:m[3]], Why: "the link's target does not exist"})
		}
	}
	return ps
}

// resolve returns why span s of a document in docDir does not resolve,
// or "".
func (ix *Index) resolve(s span, docDir string) string {
	t := strings.Join(strings.Fields(s.text), " ")
	t = strings.ReplaceAll(t, `\|`, "|")
	switch {
	case t == "":
		return ""
	case strings.Contains(t, " "):
		return ix.command(t)
	case kernelNames[t] || foreignNames[t]:
		return ""
	case len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"':
		if len(ix.literals[t[1:len(t)-1]]) == 0 {
			return "no non-test Go file has this string"
		}
		return ""
	case envRE.MatchString(t):
		return ix.env(envRE.FindStringSubmatch(t)[1])
	case strings.HasPrefix(t, "-"):
		return ix.command(t)
	case strings.Contains(t, "|"):
		for _, part := range strings.Split(t, "|") {
			if why := ix.word(part, s, docDir); why != "" {
				return part + ": " + why
			}
		}
		return ""
	}
	return ix.word(t, s, docDir)
}

// word resolves one name: an identifier, a call, a path.
func (ix *Index) word(t string, s span, docDir string) string {
	if kernelNames[t] || foreignNames[t] {
		return ""
	}
	if m := recvRE.FindStringSubmatch(t); m != nil {
		return ix.ident(m[1] + "." + m[2])
	}
	if m := callRE.FindStringSubmatch(t); m != nil {
		if why := ix.word(m[1], span{}, docDir); why != "" {
			return why
		}
		for _, a := range strings.Split(m[2], ",") {
			a = strings.TrimSpace(a)
			if a == "" || digitsRE.MatchString(a) {
				continue // no argument, or a man page's section
			}
			if why := ix.word(a, span{}, docDir); why != "" {
				return a + ": " + why
			}
		}
		for _, sel := range strings.Split(strings.TrimPrefix(m[3], "."), ".") {
			if sel != "" && !ix.anyMember(sel) {
				return sel + ": no type of the repository has such a member"
			}
		}
		return ""
	}
	t = strings.TrimPrefix(t, "*")
	if capsRE.MatchString(t) && !strings.HasPrefix(t, "DISKIO_") {
		return "" // the kernel's: IORING_OP_READ, IORING_*
	}
	if strings.ContainsAny(t, "/*") || extRE.MatchString(t) {
		if m := stdPathRE.FindStringSubmatch(t); m != nil && strings.Contains(m[1], "/") && ix.stdDir(m[1]) {
			if p := ix.stdPkg(m[1]); p != nil && p.decls[m[3]] {
				return ""
			}
			return "not declared in standard package " + m[1]
		}
		return ix.path(t, s, docDir)
	}
	if identRE.MatchString(t) {
		return ix.ident(t)
	}
	return "neither an identifier, a path nor a command"
}

// ident resolves a Go identifier, bare or qualified (pkg.Name,
// pkg.Type.Member, Type.Member).
func (ix *Index) ident(t string) string {
	parts := strings.Split(t, ".")
	if len(parts) == 1 {
		name := parts[0]
		switch {
		case ix.declared(name), ix.testFuncs[name], ix.testNames[name]:
			return ""
		case strings.HasPrefix(name, "DISKIO_"):
			return ix.env(name)
		case capsRE.MatchString(name):
			return "" // the kernel's
		case len(ix.pkgs[name]) > 0, ix.stdDir(name):
			return ""
		}
		if dir, ok := presetWords[name]; ok {
			if ix.literalIn(name, dir) {
				return ""
			}
			return "no string literal in " + dir + " says it"
		}
		return "declared nowhere in the repository's non-test Go files"
	}
	var in []*pkg
	qualifier := ""
	if parts[0] == "diskio" {
		in, qualifier = []*pkg{ix.byDir[""]}, "diskio"
	} else if ps := ix.pkgs[parts[0]]; len(ps) > 0 {
		in, qualifier = ps, parts[0]
	} else if ip, ok := stdNames[parts[0]]; ok {
		if p := ix.stdPkg(ip); p != nil && resolveIn(p, parts[1:]) {
			return ""
		}
		return "not declared in standard package " + ip
	}
	if qualifier != "" {
		for _, p := range in {
			if resolveIn(p, parts[1:]) {
				return ""
			}
		}
		return "not declared in package " + qualifier
	}
	for _, p := range ix.byDir {
		if resolveIn(p, parts) {
			return ""
		}
	}
	return "no package of the repository declares it"
}

// resolveIn reports whether p declares Name (rest is [Name]) or a type
// Name with member M ([Name, M]).
func resolveIn(p *pkg, rest []string) bool {
	switch len(rest) {
	case 1:
		return p.decls[rest[0]]
	case 2:
		return p.decls[rest[0]] && p.hasMember(rest[0], rest[1])
	}
	return false
}

// declared reports whether some package of the repository declares name
// at package level or as a member of a type.
func (ix *Index) declared(name string) bool {
	for _, p := range ix.byDir {
		if p.decls[name] {
			return true
		}
	}
	return ix.anyMember(name)
}

func (ix *Index) anyMember(name string) bool {
	for _, p := range ix.byDir {
		for _, ms := range p.members {
			if ms[name] {
				return true
			}
		}
	}
	return false
}

// path resolves a file or directory: relative to the section's package,
// the repository, or the document; a bare name outside a package's
// section, anywhere in the repository; an import path, in the
// repository's modules or what they require.
func (ix *Index) path(t string, s span, docDir string) string {
	t = strings.TrimSuffix(strings.TrimSuffix(t, "/..."), "/") // a pattern's directory
	if t == "." {
		return ""
	}
	t = strings.TrimPrefix(t, "./")
	if strings.HasPrefix(t, "/") {
		for _, p := range []string{"/proc/", "/sys/", "/dev/", "/tmp"} {
			if strings.HasPrefix(t, p) {
				return ""
			}
		}
		return "an absolute path outside /proc, /sys, /dev and /tmp"
	}
	if strings.Contains(t, "*") {
		for f := range ix.files {
			if s.haveCtx && path.Dir(f) != dirOrDot(s.ctxDir) {
				continue
			}
			name := f
			if !strings.Contains(t, "/") {
				name = path.Base(f)
			}
			if ok, _ := path.Match(t, name); ok {
				return ""
			}
		}
		return "the pattern matches no file"
	}
	if strings.HasPrefix(t, "_") {
		for f := range ix.files {
			if strings.HasSuffix(f, t) {
				return ""
			}
		}
		return "no file ends so"
	}
	if first := strings.Split(t, "/")[0]; strings.Contains(first, ".") && !extRE.MatchString(t) {
		for mod, dir := range ix.modules {
			if t == mod || strings.HasPrefix(t, mod+"/") {
				if ix.dirs[path.Join(dir, strings.TrimPrefix(strings.TrimPrefix(t, mod), "/"))] {
					return ""
				}
			}
		}
		for req := range ix.requires {
			if _, ours := ix.modules[req]; !ours && (t == req || strings.HasPrefix(t, req+"/")) {
				return ""
			}
		}
		return "neither a package of the repository's modules nor a module they require"
	}
	exists := func(p string) bool { return ix.files[p] || ix.dirs[p] }
	if s.haveCtx && !strings.Contains(t, "/") {
		if exists(path.Join(s.ctxDir, t)) {
			return ""
		}
		return "no such file in " + dirOrDot(s.ctxDir)
	}
	if exists(t) || exists(path.Join(docDir, t)) {
		return ""
	}
	for f := range ix.files {
		if !strings.Contains(t, "/") && path.Base(f) == t || strings.HasSuffix(f, "/"+t) {
			return ""
		}
	}
	for d := range ix.dirs {
		if strings.HasSuffix(d, "/"+t) {
			return ""
		}
	}
	for req := range ix.requires {
		if strings.HasSuffix(req, "/"+t) {
			return ""
		}
	}
	if ix.stdDir(t) {
		return ""
	}
	return "no such file or directory"
}

func dirOrDot(d string) string {
	if d == "" {
		return "."
	}
	return d
}

// command checks a quoted command line: the paths it names exist, and
// the testbench's flags are the testbench's. Quoted text that is not a
// command is not checked.
func (ix *Index) command(t string) string {
	w := strings.Fields(t)
	for len(w) > 0 && (envRE.MatchString(w[0]) || w[0] == "sudo") {
		if m := envRE.FindStringSubmatch(w[0]); m != nil {
			if why := ix.env(m[1]); why != "" {
				return why
			}
		}
		w = w[1:]
	}
	if len(w) == 0 {
		return ""
	}
	testbench := false
	switch {
	case w[0] == "tb" || w[0] == "./tb" || strings.HasPrefix(w[0], "-"):
		testbench = true
	case w[0] == "go" && len(w) > 2 && w[1] == "doc":
		return ix.path(w[2], span{}, "")
	case w[0] == "go" && len(w) > 2 && w[1] == "run":
		testbench = strings.TrimSuffix(w[2], "/") == "./cmd/testbench"
	case w[0] == "go":
	default:
		return ""
	}
	for _, tok := range w {
		switch {
		case strings.HasPrefix(tok, "./") && tok != "./tb":
			if why := ix.path(tok, span{}, ""); why != "" {
				return tok + ": " + why
			}
		case testbench && strings.HasPrefix(tok, "-"):
			name, _, _ := strings.Cut(strings.TrimLeft(tok, "-"), "=")
			if !ix.literalIn(name, "cmd/testbench") {
				return tok + ": the testbench has no such flag"
			}
		}
	}
	return ""
}

// env checks an environment variable's name.
func (ix *Index) env(name string) string {
	if envNames[name] {
		return ""
	}
	if !strings.HasPrefix(name, "DISKIO_") {
		return "not an environment variable the check knows"
	}
	if len(ix.literals[name]) == 0 {
		return "no non-test Go file reads it"
	}
	return ""
}

// literalIn reports whether a Go string literal s stands in a non-test
// file in dir or below it.
func (ix *Index) literalIn(s, dir string) bool {
	for _, d := range ix.literals[s] {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			return true
		}
	}
	return false
}

// Unlisted returns the problems of a layout document: a non-test Go file
// of a package that has a section of its own (a heading quoting it) that
// its section does not name (a name or a pattern; _other.go files are
// the document's general rule), and a package directory of the root
// module (but another package's internal ones) that the document does not
// name at all.
func (ix *Index) Unlisted(doc, text string) []Problem {
	named := map[string][]string{} // section's directory: what it quotes
	all := map[string]bool{}
	for _, s := range ix.spans(text) {
		all[strings.TrimSuffix(s.text, "/")] = true
		if s.haveCtx {
			named[s.ctxDir] = append(named[s.ctxDir], s.text)
		}
	}
	var ps []Problem
	for dir, spans := range named {
		for f := range ix.files {
			if path.Dir(f) != dirOrDot(dir) || !strings.HasSuffix(f, ".go") ||
				strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "_other.go") {
				continue
			}
			base, found := path.Base(f), false
			for _, s := range spans {
				if ok, _ := path.Match(s, base); ok {
					found = true
					break
				}
			}
			if !found {
				ps = append(ps, Problem{Doc: doc, Text: f, Why: "its package's section does not name it"})
			}
		}
	}
	rootDir := ix.modules["github.com/diskio-go/diskio"]
	for dir := range ix.byDir {
		if dir == rootDir || strings.HasPrefix(dir, "cmd/") || strings.HasPrefix(dir, "contrib/") ||
			ix.ownModule(dir) || all[dir] || named[dir] != nil {
			continue
		}
		if !strings.Contains(dir, "/internal/") { // a package's own internal helpers are its business
			ps = append(ps, Problem{Doc: doc, Text: dir, Why: "a package the document does not name"})
		}
	}
	return ps
}

// ownModule reports whether dir lies in a module other than the root's.
func (ix *Index) ownModule(dir string) bool {
	for _, d := range ix.modules {
		if d != "" && (dir == d || strings.HasPrefix(dir, d+"/")) {
			return true
		}
	}
	return false
}
