//go:build unix

package diskio_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/diskio-go/diskio"
)

// The side-by-side tests: every method of diskio.Root against os.Root's,
// on the same names (inside the root, and every way out of it that
// os.Root refuses), each on a fresh copy of one tree. The results, the
// errors' text and the tree after the call must be equal.

// rootFile is what both roots' files are to the tests.
type rootFile interface {
	io.ReadWriteCloser
	Name() string
	Stat() (fs.FileInfo, error)
	ReadDir(n int) ([]fs.DirEntry, error)
}

// testRoot is the method set of os.Root, with rootFile for *os.File.
type testRoot interface {
	Name() string
	Close() error
	OpenFile(name string, flag int, perm fs.FileMode) (rootFile, error)
	Open(name string) (rootFile, error)
	Create(name string) (rootFile, error)
	OpenRoot(name string) (testRoot, error)
	Mkdir(name string, perm fs.FileMode) error
	MkdirAll(name string, perm fs.FileMode) error
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldname, newname string) error
	Link(oldname, newname string) error
	Symlink(oldname, newname string) error
	Readlink(name string) (string, error)
	Chmod(name string, mode fs.FileMode) error
	Chown(name string, uid, gid int) error
	Lchown(name string, uid, gid int) error
	Chtimes(name string, atime, mtime time.Time) error
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	ReadFile(name string) ([]byte, error)
	WriteFile(name string, data []byte, perm fs.FileMode) error
	FS() fs.FS
}

// opener makes the roots of one side: os's or diskio's with options.
type opener struct {
	name       string
	openRoot   func(dir string) (testRoot, error)
	openInRoot func(dir, name string) (rootFile, error)
	direct     bool // asked for O_DIRECT: its regular files should be direct where the filesystem allows
}

type osRoot struct{ *os.Root }

func (r osRoot) OpenFile(name string, flag int, perm fs.FileMode) (rootFile, error) {
	return nilFile(r.Root.OpenFile(name, flag, perm))
}
func (r osRoot) Open(name string) (rootFile, error)   { return nilFile(r.Root.Open(name)) }
func (r osRoot) Create(name string) (rootFile, error) { return nilFile(r.Root.Create(name)) }
func (r osRoot) OpenRoot(name string) (testRoot, error) {
	sub, err := r.Root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return osRoot{sub}, nil
}

type dioRoot struct{ *diskio.Root }

func (r dioRoot) OpenFile(name string, flag int, perm fs.FileMode) (rootFile, error) {
	return nilFile(r.Root.OpenFile(name, flag, perm))
}
func (r dioRoot) Open(name string) (rootFile, error)   { return nilFile(r.Root.Open(name)) }
func (r dioRoot) Create(name string) (rootFile, error) { return nilFile(r.Root.Create(name)) }
func (r dioRoot) OpenRoot(name string) (testRoot, error) {
	sub, err := r.Root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return dioRoot{sub}, nil
}

// nilFile keeps a failed open's nil pointer from becoming a non-nil
// interface.
func nilFile[F interface {
	*os.File | *diskio.File
	rootFile
}](f F, err error) (rootFile, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

var osOpener = opener{
	name: "os.Root",
	openRoot: func(dir string) (testRoot, error) {
		r, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		return osRoot{r}, nil
	},
	openInRoot: func(dir, name string) (rootFile, error) { return nilFile(os.OpenInRoot(dir, name)) },
}

func dioOpener(name string, opts ...diskio.Option) opener {
	return opener{
		name: name,
		openRoot: func(dir string) (testRoot, error) {
			r, err := diskio.OpenRoot(dir, opts...)
			if err != nil {
				return nil, err
			}
			return dioRoot{r}, nil
		},
		openInRoot: func(dir, name string) (rootFile, error) {
			return nilFile(diskio.OpenInRoot(dir, name, opts...))
		},
		direct: len(opts) > 0,
	}
}

var rootSides = []opener{
	osOpener,
	dioOpener("diskio.Root"),
	dioOpener("diskio.Root Direct", diskio.WithDirect(diskio.Direct)),
}

// tree is the layout every case starts from: "root" is the Root's
// directory, "outside" what no call through it may reach. "ABS" in a
// link target is the tree's own directory.
var tree = []struct{ path, link, data string }{
	{path: "outside/secret", data: "outside"},
	{path: "root/file", data: "inside"},
	{path: "root/dir/nested", data: "nested"},
	{path: "root/empty/"},
	{path: "root/link-in", link: "file"},
	{path: "root/link-dir", link: "dir"},
	{path: "root/link-dotdot", link: "dir/../file"},
	{path: "root/dir/link-up", link: "../file"},
	{path: "root/link-out", link: "../outside/secret"},
	{path: "root/link-abs", link: "ABS/outside/secret"},
	{path: "root/link-abs-in", link: "ABS/root/file"},
	{path: "root/link-outdir", link: "../outside"},
	{path: "root/dir/link-up-out", link: "../../outside/secret"},
	{path: "root/link-loop", link: "link-loop"},
	{path: "root/link-dangling", link: "nothing"},
	{path: "root/link-dangling-out", link: "../outside/new"},
}

// rootNames are the names every method is called with: "ABS" is the
// tree's directory (an absolute name).
var rootNames = []string{
	// Inside the root.
	"file", "dir", "dir/nested", ".", "empty", "missing", "dir/missing",
	"link-in", "link-dir/nested", "link-dotdot", "dir/link-up", "dir/../file",
	"link-dangling", "file/", "link-loop",
	// Out of it.
	"", "..", "../outside/secret", "dir/../../outside/secret",
	"ABS/outside/secret", "ABS/root/file", "link-out", "link-abs", "link-abs-in",
	"link-outdir/secret", "dir/link-up-out", "link-out/", "link-dangling-out",
}

func makeTree(t *testing.T, base string) {
	t.Helper()
	for _, e := range tree {
		p := filepath.Join(base, e.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(e.path, "/"):
			err = os.MkdirAll(p, 0o755)
		case e.link != "":
			err = os.Symlink(strings.ReplaceAll(e.link, "ABS", base), p)
		default:
			err = os.WriteFile(p, []byte(e.data), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot lists the tree under base: each entry's type, permissions,
// size, contents or link target, and whether its mtime is fixedTime.
func snapshot(t *testing.T, base string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %q", data)
		case fi.Mode()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " -> %s", l)
		}
		if fi.ModTime().Equal(fixedTime) {
			b.WriteString(" fixed-mtime")
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(b.String(), base, "ABS")
}

var fixedTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// outcome is a result's short form for the table: ok, or the error's
// kind.
func outcome(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case strings.Contains(err.Error(), "path escapes from parent"):
		return "escapes"
	case errors.As(err, &errno):
		return errnoName(errno)
	case errors.Is(err, fs.ErrInvalid):
		return "invalid"
	}
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	}
	return err.Error()
}

func errnoName(e syscall.Errno) string {
	for name, v := range map[string]syscall.Errno{
		"ENOENT": syscall.ENOENT, "ELOOP": syscall.ELOOP, "EEXIST": syscall.EEXIST,
		"ENOTDIR": syscall.ENOTDIR, "EISDIR": syscall.EISDIR, "EINVAL": syscall.EINVAL,
		"ENOTEMPTY": syscall.ENOTEMPTY, "EBADF": syscall.EBADF, "EPERM": syscall.EPERM,
		"EBUSY": syscall.EBUSY, "EXDEV": syscall.EXDEV,
	} {
		if e == v {
			return name
		}
	}
	return e.Error()
}

// result is what one call gave: its outcome, and every detail compared.
type result struct {
	outcome string
	detail  string
	direct  *bool // a File's Direct, for diskio's regular files
}

func errResult(err error) result {
	if err == nil {
		return result{outcome: "ok"}
	}
	return result{outcome: outcome(err), detail: "error: " + err.Error()}
}

// useFile writes data (if any) to f, then describes it: name, mode, size,
// contents or entries, and the errors of each step, and closes it.
func useFile(f rootFile, err error, data string) result {
	if err != nil {
		return errResult(err)
	}
	var b strings.Builder
	if data != "" {
		n, err := f.Write([]byte(data))
		fmt.Fprintf(&b, "write %d %v; ", n, err)
	}
	fmt.Fprintf(&b, "name %s; ", f.Name())
	res := result{outcome: "ok"}
	if df, ok := f.(*diskio.File); ok {
		d := df.Direct()
		res.direct = &d
	}
	if fi, err := f.Stat(); err != nil {
		fmt.Fprintf(&b, "stat %v; ", err)
	} else {
		fmt.Fprintf(&b, "stat %s %v; ", fi.Name(), fi.Mode().Type())
		if fi.IsDir() {
			res.direct = nil
			ents, err := f.ReadDir(-1)
			names := make([]string, len(ents))
			for i, e := range ents {
				names[i] = e.Name() + " " + e.Type().String()
			}
			slices.Sort(names)
			fmt.Fprintf(&b, "entries %q %v; ", names, err)
		} else {
			data, err := io.ReadAll(f)
			fmt.Fprintf(&b, "read %q %v; ", data, err)
		}
	}
	fmt.Fprintf(&b, "close %v", f.Close())
	res.detail = b.String()
	return res
}

func infoResult(fi fs.FileInfo, err error) result {
	if err != nil {
		return errResult(err)
	}
	return result{outcome: "ok", detail: fmt.Sprintf("%s %v %d", fi.Name(), fi.Mode(), fi.Size())}
}

func dataResult[T string | []byte](v T, err error) result {
	if err != nil {
		return errResult(err)
	}
	return result{outcome: "ok", detail: fmt.Sprintf("%q", v)}
}

// rootOps are the calls made with each name: every method of os.Root's,
// some with several flags or in both argument places.
var rootOps = []struct {
	name string
	call func(s opener, r testRoot, name string) result
}{
	{"OpenFile(O_RDONLY)", func(_ opener, r testRoot, n string) result {
		f, err := r.OpenFile(n, os.O_RDONLY, 0)
		return useFile(f, err, "")
	}},
	{"OpenFile(O_RDWR)", func(_ opener, r testRoot, n string) result {
		f, err := r.OpenFile(n, os.O_RDWR, 0)
		return useFile(f, err, "+rw")
	}},
	{"OpenFile(O_WRONLY|O_APPEND)", func(_ opener, r testRoot, n string) result {
		f, err := r.OpenFile(n, os.O_WRONLY|os.O_APPEND, 0)
		return useFile(f, err, "+append")
	}},
	{"OpenFile(O_RDWR|O_CREATE)", func(_ opener, r testRoot, n string) result {
		f, err := r.OpenFile(n, os.O_RDWR|os.O_CREATE, 0o640)
		return useFile(f, err, "+create")
	}},
	{"OpenFile(O_CREATE|O_EXCL)", func(_ opener, r testRoot, n string) result {
		f, err := r.OpenFile(n, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		return useFile(f, err, "+excl")
	}},
	{"OpenFile(perm 0o1777)", func(_ opener, r testRoot, n string) result {
		f, err := r.OpenFile(n, os.O_RDWR|os.O_CREATE, 0o1777)
		return useFile(f, err, "")
	}},
	{"Open", func(_ opener, r testRoot, n string) result {
		f, err := r.Open(n)
		return useFile(f, err, "")
	}},
	{"Create", func(_ opener, r testRoot, n string) result {
		f, err := r.Create(n)
		return useFile(f, err, "created")
	}},
	{"OpenInRoot", func(s opener, r testRoot, n string) result {
		f, err := s.openInRoot(r.Name(), n)
		return useFile(f, err, "")
	}},
	{"OpenRoot", func(_ opener, r testRoot, n string) result {
		sub, err := r.OpenRoot(n)
		if err != nil {
			return errResult(err)
		}
		defer sub.Close()
		f, err := sub.Open(".")
		res := useFile(f, err, "")
		f, err = sub.Open("nested")
		nested := useFile(f, err, "")
		f, err = sub.Open("..")
		up := useFile(f, err, "")
		res.detail = fmt.Sprintf("name %s; . %s; nested %s; .. %s", sub.Name(), res.detail, nested.detail, up.detail)
		res.direct = nested.direct
		return res
	}},
	{"Mkdir", func(_ opener, r testRoot, n string) result { return errResult(r.Mkdir(n, 0o750)) }},
	{"MkdirAll", func(_ opener, r testRoot, n string) result { return errResult(r.MkdirAll(n+"/sub", 0o750)) }},
	{"Remove", func(_ opener, r testRoot, n string) result { return errResult(r.Remove(n)) }},
	{"RemoveAll", func(_ opener, r testRoot, n string) result { return errResult(r.RemoveAll(n)) }},
	{"Rename(name, new)", func(_ opener, r testRoot, n string) result { return errResult(r.Rename(n, "renamed")) }},
	{"Rename(file, name)", func(_ opener, r testRoot, n string) result { return errResult(r.Rename("file", n)) }},
	{"Link(name, new)", func(_ opener, r testRoot, n string) result { return errResult(r.Link(n, "linked")) }},
	{"Link(file, name)", func(_ opener, r testRoot, n string) result { return errResult(r.Link("file", n)) }},
	{"Symlink(file, name)", func(_ opener, r testRoot, n string) result { return errResult(r.Symlink("file", n)) }},
	{"Readlink", func(_ opener, r testRoot, n string) result { return dataResult(r.Readlink(n)) }},
	{"Chmod", func(_ opener, r testRoot, n string) result { return errResult(r.Chmod(n, 0o604)) }},
	{"Chown", func(_ opener, r testRoot, n string) result {
		return errResult(r.Chown(n, os.Getuid(), os.Getgid()))
	}},
	{"Lchown", func(_ opener, r testRoot, n string) result {
		return errResult(r.Lchown(n, os.Getuid(), os.Getgid()))
	}},
	{"Chtimes", func(_ opener, r testRoot, n string) result { return errResult(r.Chtimes(n, fixedTime, fixedTime)) }},
	{"Stat", func(_ opener, r testRoot, n string) result { return infoResult(r.Stat(n)) }},
	{"Lstat", func(_ opener, r testRoot, n string) result { return infoResult(r.Lstat(n)) }},
	{"ReadFile", func(_ opener, r testRoot, n string) result { return dataResult(r.ReadFile(n)) }},
	{"WriteFile", func(_ opener, r testRoot, n string) result {
		return errResult(r.WriteFile(n, []byte("written"), 0o640))
	}},
	{"FS Open", func(_ opener, r testRoot, n string) result {
		f, err := r.FS().Open(n)
		if err != nil {
			return errResult(err)
		}
		return useFile(f.(rootFile), nil, "")
	}},
	{"FS ReadFile", func(_ opener, r testRoot, n string) result { return dataResult(fs.ReadFile(r.FS(), n)) }},
	{"FS Stat", func(_ opener, r testRoot, n string) result { return infoResult(fs.Stat(r.FS(), n)) }},
	{"FS Lstat", func(_ opener, r testRoot, n string) result { return infoResult(fs.Lstat(r.FS(), n)) }},
	{"FS ReadLink", func(_ opener, r testRoot, n string) result { return dataResult(fs.ReadLink(r.FS(), n)) }},
	{"FS ReadDir", func(_ opener, r testRoot, n string) result {
		ents, err := fs.ReadDir(r.FS(), n)
		if err != nil {
			return errResult(err)
		}
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		return result{outcome: "ok", detail: fmt.Sprint(names)}
	}},
	{"after Close: Open", func(_ opener, r testRoot, n string) result {
		r.Close()
		f, err := r.Open(n)
		return useFile(f, err, "")
	}},
}

// runRootOp makes a fresh tree in base, opens its root with s, calls op
// with name, and returns the result and the tree after it, with base
// written ABS.
func runRootOp(t *testing.T, base string, s opener, call func(opener, testRoot, string) result, name string) (result, string) {
	t.Helper()
	makeTree(t, base)
	defer os.RemoveAll(base)
	r, err := s.openRoot(filepath.Join(base, "root"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res := call(s, r, strings.ReplaceAll(name, "ABS", base))
	res.detail = strings.ReplaceAll(res.detail, base, "ABS")
	return res, snapshot(t, base)
}

// memDir returns a new directory in /dev/shm where there is one, else
// the test's temporary directory: the side-by-side test makes and
// removes some 3,000 trees, which on a disk's ext4 takes half a minute
// and on tmpfs two seconds. Name resolution is the same on both; the
// direct descriptor is tested on the test's own directory by
// TestRootDirect and TestRootSymlinkSwapRace.
func memDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "diskio-root"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

func TestRootSideBySide(t *testing.T) {
	dir := memDir(t)
	pristine := ""
	var table [][]string // [op][name] outcome, os.Root's
	directFiles, bufferedFiles := 0, 0
	for _, op := range rootOps {
		row := make([]string, len(rootNames))
		for i, name := range rootNames {
			want, wantTree := runRootOp(t, filepath.Join(dir, "a"), osOpener, op.call, name)
			if pristine == "" {
				makeTree(t, filepath.Join(dir, "pristine"))
				pristine = snapshot(t, filepath.Join(dir, "pristine"))
			}
			if outside := treeOutside(wantTree); outside != treeOutside(pristine) {
				t.Errorf("%s(%q) on os.Root changed what is outside the root:\n%s", op.name, name, outside)
			}
			row[i] = want.outcome
			for _, s := range rootSides[1:] {
				got, gotTree := runRootOp(t, filepath.Join(dir, "b"), s, op.call, name)
				if got.outcome != want.outcome || got.detail != want.detail {
					t.Errorf("%s(%q):\n  %s: %s %s\n  %s: %s %s", op.name, name, s.name, got.outcome, got.detail, osOpener.name, want.outcome, want.detail)
				}
				if gotTree != wantTree {
					t.Errorf("%s(%q): the tree after %s:\n%s\nafter %s:\n%s", op.name, name, s.name, gotTree, osOpener.name, wantTree)
				}
				switch {
				case got.direct == nil:
				case *got.direct && !s.direct:
					t.Errorf("%s(%q) on %s: a direct File", op.name, name, s.name)
				case *got.direct:
					directFiles++
				case s.direct:
					bufferedFiles++
				}
			}
		}
		table = append(table, row)
	}
	t.Logf("regular files opened with Direct: %d direct, %d buffered", directFiles, bufferedFiles)
	if directFiles == 0 && supportsDirect(t, dir) {
		t.Errorf("no File opened through a Root with Direct was direct, on a filesystem that takes O_DIRECT")
	}
	if out := os.Getenv("DISKIO_ROOT_TABLE"); out != "" {
		writeRootTable(t, out, table)
	}
}

// treeOutside is the part of a snapshot outside the root.
func treeOutside(snap string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(snap, "\n") {
		if strings.HasPrefix(l, "outside") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// supportsDirect reports whether dir's filesystem takes O_DIRECT, as
// diskio.OpenFile with DirectRequired finds.
func supportsDirect(t *testing.T, dir string) bool {
	f, err := diskio.OpenFile(filepath.Join(dir, "probe"), os.O_RDWR|os.O_CREATE, 0o600, diskio.WithDirect(diskio.DirectRequired))
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// writeRootTable writes os.Root's outcomes, which every diskio side
// matched, as markdown tables: names inside the root, then the ways out.
func writeRootTable(t *testing.T, path string, table [][]string) {
	var b strings.Builder
	split := slices.Index(rootNames, "")
	for _, names := range [][2]int{{0, split}, {split, len(rootNames)}} {
		b.WriteString("| method |")
		for _, n := range rootNames[names[0]:names[1]] {
			fmt.Fprintf(&b, " `%q` |", strings.ReplaceAll(n, "ABS", "/abs"))
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", names[1]-names[0]) + "\n")
		for i, op := range rootOps {
			fmt.Fprintf(&b, "| %s |", strings.ReplaceAll(op.name, "|", `\|`))
			for _, o := range table[i][names[0]:names[1]] {
				fmt.Fprintf(&b, " %s |", o)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A Root's Files are direct as OpenFile's are, through the root's
// symbolic links too, and outlive the Root; OpenRoot's Roots keep the
// options.
func TestRootDirect(t *testing.T) {
	dir := t.TempDir()
	if !supportsDirect(t, dir) {
		t.Skipf("O_DIRECT not supported in %s", dir)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"d", "link"}, {filepath.Join(outside, "secret"), "abs"}, {"../" + filepath.Base(outside) + "/secret", "out"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := diskio.OpenRoot(dir, diskio.WithDirect(diskio.DirectRequired))
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Create("d")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !f.Direct() || f.Name() != filepath.Join(dir, "d") {
		t.Fatalf("Create: direct %v, name %q", f.Direct(), f.Name())
	}
	if _, err := f.WriteAt([]byte("unaligned"), 4095); err != nil {
		t.Fatal(err)
	}
	g, err := r.Open("link")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sub, err := r.OpenRoot("sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	s, err := sub.Create("x")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !g.Direct() || !s.Direct() {
		t.Fatalf("through a link: direct %v; in OpenRoot's Root: direct %v", g.Direct(), s.Direct())
	}
	osr, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer osr.Close()
	for _, name := range []string{"abs", "out"} {
		_, err := r.OpenFile(name, os.O_RDWR, 0)
		_, osErr := osr.OpenFile(name, os.O_RDWR, 0)
		if err == nil || osErr == nil || err.Error() != osErr.Error() {
			t.Errorf("OpenFile(%q) with DirectRequired: %v; os.Root: %v", name, err, osErr)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// After the Root's Close, its Files work on.
	if _, err := f.WriteAt([]byte("!"), 4095+9); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 10)
	if _, err := g.ReadAt(b, 4095); err != nil || string(b) != "unaligned!" {
		t.Fatalf("ReadAt after the Root's Close: %q, %v", b, err)
	}
	h, err := diskio.OpenInRoot(dir, "link", diskio.WithDirect(diskio.DirectRequired))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.ReadAt(b, 4095); err != nil || string(b) != "unaligned!" || !h.Direct() {
		t.Fatalf("OpenInRoot: direct %v, read %q, %v", h.Direct(), b, err)
	}
	o, err := h.OSFile()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	fi, err := o.Stat()
	fd, err2 := os.Stat(filepath.Join(dir, "d"))
	if err != nil || err2 != nil || !os.SameFile(fi, fd) {
		t.Fatalf("OSFile of a File opened in a Root: %v %v, not the same file", err, err2)
	}
}

// A concurrent symbolic link swap, a directory of the name or its last
// component flipped between a target in the root and one out of it: the
// open either finds the file in the root or is refused, for os.Root and
// diskio.Root alike, and nothing out of the root is ever written.
func TestRootSymlinkSwapRace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	for _, p := range []string{"root/real/secret", "outside/secret"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(base, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		data := "inside"
		if strings.HasPrefix(p, "outside") {
			data = "outside"
		}
		if err := os.WriteFile(filepath.Join(base, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// sw is a directory of the name, swf its last component.
	swaps := []struct{ link, in, out string }{
		{"sw", "real", "../outside"},
		{"swf", "real/secret", "../outside/secret"},
	}
	swap := func(i int) {
		for _, s := range swaps {
			target := s.in
			if i%2 == 1 {
				target = s.out
			}
			tmp := filepath.Join(root, s.link+".tmp")
			if err := os.Symlink(target, tmp); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, filepath.Join(root, s.link)); err != nil {
				t.Error(err)
				return
			}
		}
	}
	swap(0)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			swap(i)
		}
	}()
	defer func() { close(stop); <-done }()

	sides := rootSides
	hasDirect := supportsDirect(t, base)
	if hasDirect {
		sides = append(slices.Clone(sides), dioOpener("diskio.Root DirectRequired", diskio.WithDirect(diskio.DirectRequired)))
	}
	for _, s := range sides {
		r, err := s.openRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		opened, refused, direct := 0, 0, 0
		other := map[string]int{}
		deadline := time.Now().Add(5 * time.Second)
		for i := 0; (opened < 100 || refused < 100) && time.Now().Before(deadline); i++ {
			name := []string{"sw/secret", "swf"}[i%2]
			var f rootFile
			var err error
			if i%3 == 0 {
				// A write that, let through, would land out of the root.
				err = r.WriteFile(name, []byte("inside"), 0o644)
				if err == nil {
					f, err = r.Open(name)
				}
			} else {
				f, err = r.OpenFile(name, os.O_RDWR, 0)
			}
			if err != nil {
				if o := outcome(err); o == "escapes" {
					refused++
				} else {
					other[o]++
				}
				continue
			}
			opened++
			if df, ok := f.(*diskio.File); ok && df.Direct() {
				direct++
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil || string(data) != "inside" {
				t.Fatalf("%s: %s read %q, %v: out of the root", s.name, name, data, err)
			}
		}
		r.Close()
		t.Logf("%s: %d opened in the root (%d direct), %d refused as escapes, other outcomes %v", s.name, opened, direct, refused, other)
		if opened == 0 || refused == 0 {
			t.Errorf("%s: %d opens, %d refusals: the swap was not met", s.name, opened, refused)
		}
		if s.direct && direct != opened && hasDirect {
			t.Errorf("%s: %d of %d opens direct", s.name, direct, opened)
		}
	}
	if data, err := os.ReadFile(filepath.Join(base, "outside/secret")); err != nil || string(data) != "outside" {
		t.Errorf("outside/secret is %q, %v", data, err)
	}
	if ents, err := os.ReadDir(filepath.Join(base, "outside")); err != nil || len(ents) != 1 {
		t.Errorf("outside holds %v, %v", ents, err)
	}
}
