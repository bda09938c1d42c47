//go:build linux

package diskio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The differential harness: a fuzz input decodes into how to open a file
// and a sequence of operations; the operations run on two files (side A
// and side B) opened the same way on two copies of the same content, and
// every result must be the same on both sides: counts, bytes read, errors
// (kind, op, errno), offsets, sizes, and at the end the files' contents.
// FuzzDifferential runs diskio's File against *os.File, the oracle;
// TestDifferentialHarnessSelfCheck runs *os.File against itself, which
// proves the harness (and every seed) deterministic, so a mismatch under
// the fuzzer is diskio's.

// diffFile is what the harness drives: *File has it, *os.File has it
// through osDiffFile.
type diffFile interface {
	Name() string
	Read(p []byte) (int, error)
	ReadAt(p []byte, off int64) (int, error)
	Write(p []byte) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	WriteString(s string) (int, error)
	Seek(offset int64, whence int) (int64, error)
	Stat() (fs.FileInfo, error)
	Sync() error
	Datasync() error
	Truncate(size int64) error
	Preallocate(off, n int64) error
	Close() error
}

// diffOpener opens one side. direct is ignored by os.File.
type diffOpener func(name string, flag int, perm fs.FileMode, direct DirectMode) (diffFile, error)

func openDiskioDiff(name string, flag int, perm fs.FileMode, direct DirectMode) (diffFile, error) {
	f, err := OpenFile(name, flag, perm, WithDirect(direct))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// openDiskioDiffOther is openDiskioDiff in the other mode: Direct for
// PageCache, PageCache for Direct.
func openDiskioDiffOther(name string, flag int, perm fs.FileMode, direct DirectMode) (diffFile, error) {
	if direct == PageCache {
		direct = Direct
	} else {
		direct = PageCache
	}
	return openDiskioDiff(name, flag, perm, direct)
}

func openOSDiff(name string, flag int, perm fs.FileMode, _ DirectMode) (diffFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &osDiffFile{File: f}, nil
}

// osDiffFile is *os.File with the two methods os.File lacks, done the way
// diskio documents them: Datasync is fdatasync(2), Preallocate is
// fallocate(2) with mode 0, errors are *fs.PathError.
type osDiffFile struct {
	*os.File
	closed atomic.Bool
}

func (f *osDiffFile) Close() error {
	err := f.File.Close()
	f.closed.Store(true)
	return err
}

func (f *osDiffFile) Datasync() error {
	if f.closed.Load() {
		return &fs.PathError{Op: "datasync", Path: f.Name(), Err: os.ErrClosed}
	}
	if err := retryEINTR(func() error { return unix.Fdatasync(int(f.Fd())) }); err != nil {
		return &fs.PathError{Op: "datasync", Path: f.Name(), Err: err}
	}
	return nil
}

func (f *osDiffFile) Preallocate(off, n int64) error {
	if f.closed.Load() {
		return &fs.PathError{Op: "preallocate", Path: f.Name(), Err: os.ErrClosed}
	}
	if off < 0 || n <= 0 {
		return &fs.PathError{Op: "preallocate", Path: f.Name(), Err: syscall.EINVAL}
	}
	if err := retryEINTR(func() error { return unix.Fallocate(int(f.Fd()), 0, off, n) }); err != nil {
		return &fs.PathError{Op: "preallocate", Path: f.Name(), Err: err}
	}
	return nil
}

func retryEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// Operations.
const (
	opRead = iota
	opReadAt
	opWrite
	opWriteAt
	opWriteString
	opSeek
	opTruncate
	opSync
	opStat
	opReopen
	opClose
	opDatasync
	opPreallocate
	numOps // codes numOps.. (13, 14, 15) decode as Other, WriteAt, Write

	// opOther is an operation through a second descriptor of the same
	// file, an *os.File on both sides (sel: otherAppend, otherWriteAt,
	// otherTruncate): the File must see it and must not undo it.
	opOther = numOps
)

const (
	otherAppend = iota // an O_APPEND write of n bytes
	otherWriteAt
	otherTruncate
	numOther
)

var otherNames = [numOther]string{"Append", "WriteAt", "Truncate"}

var opNames = [numOps]string{"Read", "ReadAt", "Write", "WriteAt", "WriteString", "Seek",
	"Truncate", "Sync", "Stat", "Reopen", "Close", "Datasync", "Preallocate"}

// diffOp is one decoded operation.
type diffOp struct {
	code   int
	n      int   // length: Read*, Write*, Preallocate
	off    int64 // ReadAt, WriteAt, Seek, Truncate, Preallocate
	whence int   // Seek
	shift  int   // buffer address: 0 = 4096-aligned, else that many bytes past
	sel    int   // Reopen: index into reopenFlags; Other: which operation
}

func (o diffOp) String() string {
	if o.code == opOther {
		switch o.sel {
		case otherAppend:
			return fmt.Sprintf("Other.Append(len=%d)", o.n)
		case otherWriteAt:
			return fmt.Sprintf("Other.WriteAt(len=%d off=%d)", o.n, o.off)
		}
		return fmt.Sprintf("Other.%s(%d)", otherNames[o.sel], o.off)
	}
	name := opNames[o.code]
	buf := ""
	if o.shift != 0 {
		buf = fmt.Sprintf(" buf+%d", o.shift)
	}
	switch o.code {
	case opRead, opWrite, opWriteString:
		return fmt.Sprintf("%s(len=%d%s)", name, o.n, buf)
	case opReadAt, opWriteAt:
		return fmt.Sprintf("%s(len=%d off=%d%s)", name, o.n, o.off, buf)
	case opSeek:
		return fmt.Sprintf("Seek(%d, %s)", o.off, whenceName(o.whence))
	case opTruncate:
		return fmt.Sprintf("Truncate(%d)", o.off)
	case opPreallocate:
		return fmt.Sprintf("Preallocate(off=%d n=%d)", o.off, o.n)
	case opReopen:
		return fmt.Sprintf("Reopen(%s)", flagName(reopenFlag(o.sel, 0)))
	}
	return name + "()"
}

func whenceName(w int) string {
	switch w {
	case io.SeekStart:
		return "SeekStart"
	case io.SeekCurrent:
		return "SeekCurrent"
	case io.SeekEnd:
		return "SeekEnd"
	}
	return "whence=" + strconv.Itoa(w)
}

func flagName(flag int) string {
	var s []string
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		s = append(s, "O_RDONLY")
	case os.O_WRONLY:
		s = append(s, "O_WRONLY")
	case os.O_RDWR:
		s = append(s, "O_RDWR")
	}
	for _, f := range []struct {
		bit  int
		name string
	}{{os.O_APPEND, "O_APPEND"}, {os.O_CREATE, "O_CREATE"}, {os.O_EXCL, "O_EXCL"}, {os.O_TRUNC, "O_TRUNC"}} {
		if flag&f.bit != 0 {
			s = append(s, f.name)
		}
	}
	return strings.Join(s, "|")
}

// diffSetup is how the file is made and first opened.
type diffSetup struct {
	flag    int
	prefill int // bytes of content before the open; -1: no file (the flag has O_CREATE|O_EXCL)
	direct  DirectMode
}

func (s diffSetup) String() string {
	pre := fmt.Sprintf("%d bytes", s.prefill)
	if s.prefill < 0 {
		pre = "no file"
	}
	d := ""
	if s.direct == Direct {
		d = " WithDirect(Direct)"
	}
	return fmt.Sprintf("OpenFile(%s)%s over %s", flagName(s.flag), d, pre)
}

var prefillSizes = []int{0, 1, 100, 4095, 4096, 4097, 5000, 8192, 3*4096 + 123, 3*4096 + 4000, 511, 512, 8191, 6000, 4096 + 37, 2 * 4096}

var accessModes = []int{os.O_RDWR, os.O_RDWR | os.O_APPEND, os.O_WRONLY, os.O_RDONLY}

// reopenFlag is the flag of Reopen(sel); entry 0 is the first open's flag
// without O_TRUNC, O_CREATE and O_EXCL (first is that flag).
func reopenFlag(sel, first int) int {
	flags := []int{
		first &^ (os.O_TRUNC | os.O_CREATE | os.O_EXCL),
		os.O_RDWR,
		os.O_RDONLY,
		os.O_WRONLY,
		os.O_RDWR | os.O_APPEND,
		os.O_WRONLY | os.O_APPEND,
		os.O_RDWR | os.O_TRUNC,
		os.O_RDWR | os.O_CREATE | os.O_EXCL, // fails: the file exists
	}
	return flags[sel%len(flags)]
}

const (
	maxDiffOps  = 64
	uniformSpan = 3*4096 + 512 // offsets of kind 1: 0..uniformSpan-1
)

// Special offsets: the first five are for every offset argument, the
// last two only where they cannot make a huge file (Seek, ReadAt).
var specialOffsets = []int64{-1, -512, -4096, -4097, math.MinInt64, 1 << 62, math.MaxInt64}

var lengthTable = []int{0, 1, 511, 512, 513, 4095, 4096, 4097, 8191, 8192, 8193, 9000}

// decodeOffset maps two bytes to an offset: near a block edge (block 0..3
// plus -128..127; for Seek, huge, also minus block 1..3), uniform in
// 0..uniformSpan, a multiple of 512, small, or special (negative; huge if
// huge).
func decodeOffset(b1, b2 byte, huge bool) int64 {
	switch b1 >> 6 {
	case 0:
		if huge && b1&4 != 0 {
			return -int64(b1&3)*4096 + int64(int8(b2))
		}
		return int64(b1&3)*4096 + int64(int8(b2))
	case 1:
		return (int64(b1&63)<<8 | int64(b2)) % uniformSpan
	case 2:
		return int64(b2%32) * 512
	}
	if b1&63 == 63 {
		if huge {
			return specialOffsets[int(b2)%len(specialOffsets)]
		}
		return specialOffsets[int(b2)%5]
	}
	return int64(b2)
}

// decodeLength maps two bytes to a length in 0..9000.
func decodeLength(b1, b2 byte) int {
	switch b1 >> 6 {
	case 0:
		return int(b1 & 63)
	case 3:
		return lengthTable[int(b2)%len(lengthTable)]
	}
	return (int(b1&63)<<8 | int(b2)) % 9001
}

var whences = []int{io.SeekStart, io.SeekCurrent, io.SeekEnd, io.SeekStart, io.SeekCurrent, io.SeekEnd, 5, -1}

type byteReader struct {
	b []byte
	i int
}

func (r *byteReader) u8() byte {
	if r.i >= len(r.b) {
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

// decodeDiff decodes a fuzz input: byte 0 chooses the flags (bits 0-1 the
// access mode of accessModes, bit 2 O_TRUNC, bit 3 O_APPEND, bits 4-5 both
// set Direct, bit 6 no file and O_CREATE|O_EXCL), byte 1 the content
// size (prefillSizes), then each operation is a byte (low 4 bits the
// operation, high 4 the buffer shift; Close only with shift 0 or 1, Read
// otherwise) and its arguments.
func decodeDiff(data []byte) (diffSetup, []diffOp) {
	r := &byteReader{b: data}
	b0 := r.u8()
	s := diffSetup{flag: accessModes[b0&3], prefill: prefillSizes[int(r.u8())%len(prefillSizes)]}
	if b0&4 != 0 {
		s.flag |= os.O_TRUNC
	}
	if b0&8 != 0 {
		s.flag |= os.O_APPEND
	}
	if b0&0x30 == 0x30 {
		s.direct = Direct
	}
	if b0&0x40 != 0 {
		s.prefill = -1
		s.flag |= os.O_CREATE | os.O_EXCL
	}
	var ops []diffOp
	for r.i < len(r.b) && len(ops) < maxDiffOps {
		c := r.u8()
		o := diffOp{code: int(c & 15), shift: int(c >> 4)}
		switch o.code {
		case 13:
			o.code, o.sel = opOther, int(c>>4)%numOther
		case 14:
			o.code = opWriteAt
		case 15:
			o.code = opWrite
		case opClose:
			if c>>4 > 1 {
				o.code = opRead // Close is rarer: after it, every call fails
			}
		}
		switch o.code {
		case opRead, opWrite, opWriteString:
			o.n = decodeLength(r.u8(), r.u8())
		case opReadAt:
			o.n = decodeLength(r.u8(), r.u8())
			o.off = decodeOffset(r.u8(), r.u8(), true)
		case opWriteAt:
			o.n = decodeLength(r.u8(), r.u8())
			o.off = decodeOffset(r.u8(), r.u8(), false)
		case opSeek:
			o.off = decodeOffset(r.u8(), r.u8(), true)
			o.whence = whences[int(r.u8())%len(whences)]
		case opTruncate:
			o.off = decodeOffset(r.u8(), r.u8(), false)
		case opReopen:
			o.sel = int(r.u8()) % 8
		case opPreallocate:
			o.off = decodeOffset(r.u8(), r.u8(), false)
			o.n = decodeLength(r.u8(), r.u8())
		case opOther:
			switch o.sel {
			case otherAppend:
				o.n = decodeLength(r.u8(), r.u8())
			case otherWriteAt:
				o.n = decodeLength(r.u8(), r.u8())
				o.off = decodeOffset(r.u8(), r.u8(), false)
			default:
				o.off = decodeOffset(r.u8(), r.u8(), false)
			}
		}
		switch o.code {
		case opRead, opReadAt, opWrite, opWriteAt:
		default:
			o.shift = 0
		}
		ops = append(ops, o)
	}
	return s, ops
}

// describeDiff is the decoded input, one line per operation.
func describeDiff(data []byte) string {
	s, ops := decodeDiff(data)
	var b strings.Builder
	fmt.Fprintf(&b, "setup: %v\n", s)
	for i, o := range ops {
		fmt.Fprintf(&b, "  #%d %v\n", i, o)
	}
	return b.String()
}

// diffBuf returns n bytes at shift past a 4096-aligned address.
func diffBuf(n, shift int) []byte {
	raw := make([]byte, n+shift+8192)
	start := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw)))&4095) + shift
	return raw[start : start+n : start+n]
}

// diffPattern is the content of the k-th write: mostly nonzero, different
// for every k, so that holes, stale data and misplaced bytes show.
func diffPattern(n, k int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(k*61 + i*7 + 1 + i/251)
	}
	return b
}

// errKey is what two equivalent errors share: the errno, the sentinel
// errors they match, and where there is neither, the message.
func errKey(err error, path string) string {
	var parts []string
	var errno syscall.Errno
	if errors.As(err, &errno) {
		parts = append(parts, fmt.Sprintf("errno %d (%v)", int(errno), errno))
	}
	for _, s := range []struct {
		err  error
		name string
	}{
		{io.EOF, "io.EOF"}, {io.ErrUnexpectedEOF, "io.ErrUnexpectedEOF"}, {io.ErrShortWrite, "io.ErrShortWrite"},
		{os.ErrClosed, "os.ErrClosed"}, {os.ErrInvalid, "os.ErrInvalid"}, {os.ErrExist, "os.ErrExist"},
		{os.ErrNotExist, "os.ErrNotExist"}, {os.ErrPermission, "os.ErrPermission"},
		{os.ErrDeadlineExceeded, "os.ErrDeadlineExceeded"}, {os.ErrNoDeadline, "os.ErrNoDeadline"},
	} {
		if errors.Is(err, s.err) {
			parts = append(parts, s.name)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, strconv.Quote(strings.ReplaceAll(err.Error(), path, "<path>")))
	}
	return strings.Join(parts, ", ")
}

// diffErr says how ea (from path pa) and eb (from path pb) differ, "" if
// they are the same error: both nil; both io.EOF itself; both
// *fs.PathError with the same Op, their own path and equivalent Err; or
// equivalent errors of another type.
func diffErr(ea, eb error, pa, pb string) string {
	show := func() string { return fmt.Sprintf("A: %#v (%v)\n B: %#v (%v)", ea, ea, eb, eb) }
	if ea == nil || eb == nil {
		if ea != eb {
			return "error presence differs:\n " + show()
		}
		return ""
	}
	if ea == io.EOF || eb == io.EOF {
		if ea != eb {
			return "io.EOF on one side only:\n " + show()
		}
		return ""
	}
	if ioe, ok := ea.(*IOError); ok {
		// A failure of the kernel's: os.File's *fs.PathError, wrapped
		// with the caller's offset and length (the one difference, by
		// design: errors.As finds the PathError, whose Err is the errno).
		ea = &ioe.PathError
	}
	pea, okA := ea.(*fs.PathError)
	peb, okB := eb.(*fs.PathError)
	if okA != okB {
		return "*fs.PathError on one side only:\n " + show()
	}
	if okA {
		if pea.Op != peb.Op {
			return fmt.Sprintf("PathError.Op %q != %q:\n %s", pea.Op, peb.Op, show())
		}
		if pea.Path != pa || peb.Path != pb {
			return fmt.Sprintf("PathError.Path %q, %q, want %q, %q", pea.Path, peb.Path, pa, pb)
		}
		ea, eb = pea.Err, peb.Err
	}
	if ka, kb := errKey(ea, pa), errKey(eb, pb); ka != kb {
		return fmt.Sprintf("errors differ: %s != %s:\n %s", ka, kb, show())
	}
	var errno syscall.Errno
	if errors.As(eb, &errno) && !errors.Is(ea, errno) {
		return "errors.Is(A, " + errno.Error() + ") is false:\n " + show()
	}
	return ""
}

// diffSide is one of the two files under test.
type diffSide struct {
	path  string
	open  diffOpener
	f     diffFile
	other *os.File // the second descriptor, opened at its first use
}

// otherOp runs o through the side's second descriptor.
func (s *diffSide) otherOp(o diffOp, p []byte) (int64, error) {
	switch o.sel {
	case otherAppend:
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		n, err := f.Write(p)
		return int64(n), err
	}
	if s.other == nil {
		f, err := os.OpenFile(s.path, os.O_RDWR, 0)
		if err != nil {
			return 0, err
		}
		s.other = f
	}
	if o.sel == otherWriteAt {
		n, err := s.other.WriteAt(p, o.off)
		return int64(n), err
	}
	return 0, s.other.Truncate(o.off)
}

// runDifferential runs the operations data decodes into on a file in
// dir/a (side A, opened by openA) and one in dir/b (side B, openB), and
// returns the first difference, with the operations so far, or nil.
func runDifferential(dir string, data []byte, openA, openB diffOpener) (err error) {
	setup, ops := decodeDiff(data)
	a := &diffSide{path: filepath.Join(dir, "a", "file"), open: openA}
	b := &diffSide{path: filepath.Join(dir, "b", "file"), open: openB}
	defer func() {
		for _, s := range []*diffSide{a, b} {
			if s.f != nil {
				s.f.Close()
			}
			if s.other != nil {
				s.other.Close()
			}
		}
	}()
	var trace strings.Builder
	fmt.Fprintf(&trace, "setup: %v\n", setup)
	fail := func(step, format string, args ...any) error {
		return fmt.Errorf("differential mismatch at %s: %s\ninput %q decodes to:\n%s", step, fmt.Sprintf(format, args...), data, trace.String())
	}
	step := "setup"
	defer func() {
		// A panic (on either side) is a difference too; reported as one,
		// it fails this input instead of the whole test binary.
		if p := recover(); p != nil {
			err = fail(step, "panic: %v\n%s", p, debug.Stack())
		}
	}()
	content := diffPattern(max(setup.prefill, 0), 1000)
	for _, s := range []*diffSide{a, b} {
		if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
			return err
		}
		if setup.prefill >= 0 {
			if err := os.WriteFile(s.path, content, 0o644); err != nil {
				return err
			}
		}
	}
	open := func(step string, flag int) error {
		fa, ea := a.open(a.path, flag, 0o644, setup.direct)
		fb, eb := b.open(b.path, flag, 0o644, setup.direct)
		fmt.Fprintf(&trace, "  %s -> A err=%v, B err=%v\n", step, ea, eb)
		if d := diffErr(ea, eb, a.path, b.path); d != "" {
			if fa != nil {
				fa.Close()
			}
			if fb != nil {
				fb.Close()
			}
			return fail(step, "%s", d)
		}
		if ea == nil {
			a.f, b.f = fa, fb
		}
		return nil
	}
	if err := open("open "+setup.String(), setup.flag); err != nil {
		return err
	}
	if a.f == nil {
		return nil // both failed the same way
	}
	sameFiles := func(step string) error {
		ca, ea := os.ReadFile(a.path)
		cb, eb := os.ReadFile(b.path)
		if ea != nil || eb != nil {
			return fail(step, "reading the files back: %v, %v", ea, eb)
		}
		if !bytes.Equal(ca, cb) {
			return fail(step, "file contents differ: A %d bytes, B %d bytes, first difference at %d", len(ca), len(cb), firstDiff(ca, cb))
		}
		return nil
	}

	for i, o := range ops {
		step = fmt.Sprintf("op #%d %v", i, o)
		var (
			na, nb   int64
			ea, eb   error
			ra, rb   []byte // bytes read
			extra    string
			checkOut bool
		)
		switch o.code {
		case opRead, opReadAt:
			ba, bb := diffBuf(o.n, o.shift), diffBuf(o.n, o.shift)
			for j := range ba {
				ba[j], bb[j] = 0xEE, 0xEE
			}
			var ia, ib int
			if o.code == opRead {
				ia, ea = a.f.Read(ba)
				ib, eb = b.f.Read(bb)
			} else {
				ia, ea = a.f.ReadAt(ba, o.off)
				ib, eb = b.f.ReadAt(bb, o.off)
			}
			na, nb = int64(ia), int64(ib)
			if ia < 0 || ia > o.n || ib < 0 || ib > o.n {
				fmt.Fprintf(&trace, "  %s -> A (%d, %v), B (%d, %v)\n", step, na, ea, nb, eb)
				return fail(step, "count out of range: A %d, B %d", ia, ib)
			}
			ra, rb = ba[:ia], bb[:ib]
		case opWrite, opWriteAt, opWriteString:
			p := diffPattern(o.n, i)
			ba, bb := diffBuf(o.n, o.shift), diffBuf(o.n, o.shift)
			copy(ba, p)
			copy(bb, p)
			var ia, ib int
			switch o.code {
			case opWrite:
				ia, ea = a.f.Write(ba)
				ib, eb = b.f.Write(bb)
			case opWriteAt:
				ia, ea = a.f.WriteAt(ba, o.off)
				ib, eb = b.f.WriteAt(bb, o.off)
			default:
				ia, ea = a.f.WriteString(string(p))
				ib, eb = b.f.WriteString(string(p))
			}
			na, nb = int64(ia), int64(ib)
			if !bytes.Equal(ba, p) || !bytes.Equal(bb, p) {
				extra = "the write changed the caller's buffer"
			}
		case opSeek:
			na, ea = a.f.Seek(o.off, o.whence)
			nb, eb = b.f.Seek(o.off, o.whence)
		case opTruncate:
			ea, eb = a.f.Truncate(o.off), b.f.Truncate(o.off)
		case opSync:
			ea, eb = a.f.Sync(), b.f.Sync()
			checkOut = true
		case opDatasync:
			ea, eb = a.f.Datasync(), b.f.Datasync()
			checkOut = true
		case opPreallocate:
			ea, eb = a.f.Preallocate(o.off, int64(o.n)), b.f.Preallocate(o.off, int64(o.n))
		case opOther:
			p := diffPattern(o.n, i+500)
			na, ea = a.otherOp(o, p)
			nb, eb = b.otherOp(o, p)
		case opClose:
			ea, eb = a.f.Close(), b.f.Close()
		case opStat:
			fa, errA := a.f.Stat()
			fb, errB := b.f.Stat()
			ea, eb = errA, errB
			if errA == nil && errB == nil {
				na, nb = fa.Size(), fb.Size()
				if fa.Name() != fb.Name() || fa.Mode() != fb.Mode() || fa.IsDir() != fb.IsDir() {
					extra = fmt.Sprintf("FileInfo differs: A %s %v dir=%v, B %s %v dir=%v",
						fa.Name(), fa.Mode(), fa.IsDir(), fb.Name(), fb.Mode(), fb.IsDir())
				}
			}
		case opReopen:
			ea, eb = a.f.Close(), b.f.Close()
			fmt.Fprintf(&trace, "  %s: Close -> A %v, B %v\n", step, ea, eb)
			if d := diffErr(ea, eb, a.path, b.path); d != "" {
				return fail(step, "Close: %s", d)
			}
			if err := open(step+": open", reopenFlag(o.sel, setup.flag)); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(&trace, "  %s -> A (%d, %v), B (%d, %v)\n", step, na, ea, nb, eb)
		if d := diffErr(ea, eb, a.path, b.path); d != "" {
			return fail(step, "%s", d)
		}
		if na != nb {
			return fail(step, "results differ: A %d, B %d", na, nb)
		}
		if !bytes.Equal(ra, rb) {
			return fail(step, "data read differs at byte %d of %d: A % x..., B % x...", firstDiff(ra, rb), len(ra),
				ra[firstDiff(ra, rb):min(len(ra), firstDiff(ra, rb)+16)], rb[firstDiff(ra, rb):min(len(rb), firstDiff(ra, rb)+16)])
		}
		if extra != "" {
			return fail(step, "%s", extra)
		}
		if checkOut && ea == nil {
			// After a successful Sync or Datasync the files on disk
			// must be the same, size included.
			if err := sameFiles(step + " (files after it)"); err != nil {
				return err
			}
		}
	}
	step = "final Close"
	ea, eb := a.f.Close(), b.f.Close()
	fmt.Fprintf(&trace, "  final Close -> A %v, B %v\n", ea, eb)
	if d := diffErr(ea, eb, a.path, b.path); d != "" {
		return fail("final Close", "%s", d)
	}
	return sameFiles("end (os.ReadFile of both files)")
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// FuzzDifferential runs the decoded operations on a diskio File and on an
// *os.File and requires the same results (see runDifferential). The seed
// corpus is testdata/fuzz/FuzzDifferential (TestWriteDiffSeeds makes it).
func FuzzDifferential(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		require.NoError(t, runDifferential(t.TempDir(), data, openDiskioDiff, openOSDiff))
		// The same sequence in the other mode: the page cache (the
		// default) and O_DIRECT both keep os.File's contract.
		require.NoError(t, runDifferential(t.TempDir(), data, openDiskioDiffOther, openOSDiff))
	})
}

// TestDifferentialHarnessSelfCheck runs the harness with *os.File on both
// sides over the seed corpus and random inputs: every input must agree with
// itself, so the harness and the seeds are deterministic and a mismatch in
// FuzzDifferential is the File's.
func TestDifferentialHarnessSelfCheck(t *testing.T) {
	var inputs [][]byte
	for _, s := range diffSeeds() {
		inputs = append(inputs, s.encode())
	}
	corpus, err := readDiffCorpus()
	require.NoError(t, err)
	inputs = append(inputs, corpus...)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		in := make([]byte, 2+rng.IntN(120))
		for j := range in {
			in[j] = byte(rng.Uint32())
		}
		inputs = append(inputs, in)
	}
	for i, in := range inputs {
		require.NoError(t, runDifferential(t.TempDir(), in, openOSDiff, openOSDiff), "input %d", i)
	}
}

// TestDifferentialHarnessDetects: the harness notices a file that differs
// from os.File in a count, an error, a size, or the bytes it writes.
func TestDifferentialHarnessDetects(t *testing.T) {
	in := diffSeed{flag: 0, prefill: 6000, ops: []diffOp{
		{code: opReadAt, n: 100, off: 5950},
		{code: opStat},
		{code: opWriteAt, n: 10, off: 4090},
		{code: opSeek, off: -1, whence: io.SeekStart},
	}}.encode()
	require.NoError(t, runDifferential(t.TempDir(), in, openOSDiff, openOSDiff))
	for _, skew := range []string{"readat-nil-eof", "stat-size", "write-off", "seek-errno"} {
		skewed := func(name string, flag int, perm fs.FileMode, d DirectMode) (diffFile, error) {
			f, err := openOSDiff(name, flag, perm, d)
			if err != nil {
				return nil, err
			}
			return &skewedFile{diffFile: f, skew: skew}, nil
		}
		err := runDifferential(t.TempDir(), in, skewed, openOSDiff)
		require.Error(t, err, skew)
		t.Logf("%s: %v", skew, strings.SplitN(err.Error(), "\n", 2)[0])
	}
}

type skewedFile struct {
	diffFile
	skew string
}

func (f *skewedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.diffFile.ReadAt(p, off)
	if f.skew == "readat-nil-eof" && err == io.EOF {
		err = nil
	}
	return n, err
}

func (f *skewedFile) WriteAt(p []byte, off int64) (int, error) {
	if f.skew == "write-off" {
		off++
	}
	return f.diffFile.WriteAt(p, off)
}

func (f *skewedFile) Seek(off int64, whence int) (int64, error) {
	r, err := f.diffFile.Seek(off, whence)
	if f.skew == "seek-errno" && err != nil {
		err = &fs.PathError{Op: "seek", Path: f.Name(), Err: syscall.ERANGE}
	}
	return r, err
}

type sizeSkewedInfo struct{ fs.FileInfo }

func (fi sizeSkewedInfo) Size() int64 { return fi.FileInfo.Size() + 1 }

func (f *skewedFile) Stat() (fs.FileInfo, error) {
	fi, err := f.diffFile.Stat()
	if f.skew == "stat-size" && err == nil {
		fi = sizeSkewedInfo{fi}
	}
	return fi, err
}

// TestDiffDecodeRoundTrip: every seed decodes to the operations it was
// made of.
func TestDiffDecodeRoundTrip(t *testing.T) {
	for _, s := range diffSeeds() {
		setup, ops := decodeDiff(s.encode())
		require.Equal(t, s.setup(), setup, s.name)
		require.Equal(t, len(s.ops), len(ops), s.name)
		for i, o := range ops {
			want := s.ops[i]
			require.Equal(t, want, o, "%s op %d", s.name, i)
		}
	}
}

// TestDescribeDiffInput prints what the fuzz inputs named by
// DISKIO_DESCRIBE (corpus file paths, comma-separated) decode to.
func TestDescribeDiffInput(t *testing.T) {
	names := os.Getenv("DISKIO_DESCRIBE")
	if names == "" {
		t.Skip("DISKIO_DESCRIBE not set")
	}
	for _, name := range strings.Split(names, ",") {
		data, err := readCorpusFile(name)
		require.NoError(t, err)
		t.Logf("%s:\n%s", name, describeDiff(data))
		t.Logf("os.File vs os.File: %v", runDifferential(t.TempDir(), data, openOSDiff, openOSDiff))
		t.Logf("File vs os.File: %v", runDifferential(t.TempDir(), data, openDiskioDiff, openOSDiff))
	}
}

const diffCorpusDir = "testdata/fuzz/FuzzDifferential"

func readDiffCorpus() ([][]byte, error) {
	entries, err := os.ReadDir(diffCorpusDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, e := range entries {
		data, err := readCorpusFile(filepath.Join(diffCorpusDir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// readCorpusFile reads a "go test fuzz v1" file of one []byte value.
func readCorpusFile(name string) ([]byte, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		return nil, fmt.Errorf("%s: not a go test fuzz v1 file of one value", name)
	}
	v := strings.TrimSpace(lines[1])
	if !strings.HasPrefix(v, "[]byte(") || !strings.HasSuffix(v, ")") {
		return nil, fmt.Errorf("%s: not a []byte value: %s", name, v)
	}
	s, err := strconv.Unquote(v[len("[]byte(") : len(v)-1])
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return []byte(s), nil
}

// diffSeed is a named scenario of the seed corpus.
type diffSeed struct {
	name    string
	flag    byte // byte 0 of the input
	prefill int  // a size of prefillSizes
	ops     []diffOp
}

func (s diffSeed) setup() diffSetup {
	st, _ := decodeDiff(s.encode()[:2])
	return st
}

// encode makes the input that decodes to s; it panics on a value the
// decoder cannot produce.
func (s diffSeed) encode() []byte {
	pi := -1
	for i, v := range prefillSizes {
		if v == s.prefill {
			pi = i
			break
		}
	}
	if pi < 0 {
		panic(fmt.Sprintf("seed %s: prefill %d not in prefillSizes", s.name, s.prefill))
	}
	out := []byte{s.flag, byte(pi)}
	encOff := func(off int64, huge bool) []byte {
		for b1 := range 256 {
			for b2 := range 256 {
				if decodeOffset(byte(b1), byte(b2), huge) == off {
					return []byte{byte(b1), byte(b2)}
				}
			}
		}
		panic(fmt.Sprintf("seed %s: offset %d cannot be encoded", s.name, off))
	}
	encLen := func(n int) []byte {
		for b1 := range 256 {
			for b2 := range 256 {
				if decodeLength(byte(b1), byte(b2)) == n {
					return []byte{byte(b1), byte(b2)}
				}
			}
		}
		panic(fmt.Sprintf("seed %s: length %d cannot be encoded", s.name, n))
	}
	for _, o := range s.ops {
		out = append(out, byte(o.code)|byte(o.shift<<4))
		switch o.code {
		case opRead, opWrite, opWriteString:
			out = append(out, encLen(o.n)...)
		case opReadAt:
			out = append(out, encLen(o.n)...)
			out = append(out, encOff(o.off, true)...)
		case opWriteAt:
			out = append(out, encLen(o.n)...)
			out = append(out, encOff(o.off, false)...)
		case opSeek:
			out = append(out, encOff(o.off, true)...)
			wi := -1
			for i, w := range whences {
				if w == o.whence {
					wi = i
					break
				}
			}
			out = append(out, byte(wi))
		case opTruncate:
			out = append(out, encOff(o.off, false)...)
		case opReopen:
			out = append(out, byte(o.sel))
		case opPreallocate:
			out = append(out, encOff(o.off, false)...)
			out = append(out, encLen(o.n)...)
		case opOther:
			out[len(out)-1] = byte(13) | byte(o.sel<<4)
			switch o.sel {
			case otherAppend:
				out = append(out, encLen(o.n)...)
			case otherWriteAt:
				out = append(out, encLen(o.n)...)
				out = append(out, encOff(o.off, false)...)
			default:
				out = append(out, encOff(o.off, false)...)
			}
		}
	}
	return out
}

// Shorthands for the seeds.
func sRead(n int) diffOp              { return diffOp{code: opRead, n: n} }
func sReadAt(n int, off int64) diffOp { return diffOp{code: opReadAt, n: n, off: off} }
func sWrite(n int) diffOp             { return diffOp{code: opWrite, n: n} }
func sWriteAt(n int, off int64) diffOp {
	return diffOp{code: opWriteAt, n: n, off: off}
}
func sWriteString(n int) diffOp          { return diffOp{code: opWriteString, n: n} }
func sSeek(off int64, whence int) diffOp { return diffOp{code: opSeek, off: off, whence: whence} }
func sTruncate(size int64) diffOp        { return diffOp{code: opTruncate, off: size} }
func sPrealloc(off int64, n int) diffOp  { return diffOp{code: opPreallocate, off: off, n: n} }
func sReopen(sel int) diffOp             { return diffOp{code: opReopen, sel: sel} }
func sOp(code int) diffOp                { return diffOp{code: code} }
func oAppend(n int) diffOp               { return diffOp{code: opOther, sel: otherAppend, n: n} }
func oWriteAt(n int, off int64) diffOp {
	return diffOp{code: opOther, sel: otherWriteAt, n: n, off: off}
}
func oTruncate(size int64) diffOp        { return diffOp{code: opOther, sel: otherTruncate, off: size} }
func shifted(o diffOp, shift int) diffOp { o.shift = shift; return o }
func sReadAll(off int64) diffOp          { return sReadAt(9000, off) }
func seq(ops ...diffOp) []diffOp         { return ops }
func withStat(ops ...diffOp) []diffOp    { return append(ops, sOp(opStat), sReadAll(0), sReadAll(8000)) }
func sSeekCur() diffOp                   { return sSeek(0, io.SeekCurrent) }
func sSync() diffOp                      { return sOp(opSync) }

// Flag bytes (byte 0): accessModes index, +4 O_TRUNC, +8 O_APPEND,
// +0x30 Direct, +0x40 new file with O_CREATE|O_EXCL.
const (
	fRDWR   = 0
	fAPPEND = 1 // O_RDWR|O_APPEND
	fWRONLY = 2
	fRDONLY = 3
)

// diffSeeds are the scenarios of the seed corpus.
func diffSeeds() []diffSeed {
	return []diffSeed{
		{"unaligned-write-mid-block", fRDWR, 8192, withStat(sWriteAt(100, 1000), sReadAt(300, 900))},
		{"unaligned-write-unaligned-buffer", fRDWR, 8192, withStat(shifted(sWriteAt(100, 1000), 3), shifted(sReadAt(300, 900), 5))},
		{"write-spanning-block-boundary", fRDWR, 3*4096 + 123, withStat(sWriteAt(200, 4000), sReadAt(400, 3900))},
		{"write-spanning-three-blocks", fRDWR, 3*4096 + 123, withStat(sWriteAt(8193, 4000), sReadAt(9000, 3000))},
		{"aligned-write-aligned-buffer", fRDWR, 8192, withStat(sWriteAt(4096, 4096), sReadAt(4096, 4096), sReadAt(8192, 0))},
		{"extend-past-eof-leaving-hole", fRDWR, 100, withStat(sWriteAt(50, 9000), sReadAt(9000, 0), sReadAt(200, 4000))},
		{"extend-from-empty-unaligned", fRDWR, 0, withStat(sWriteAt(10, 5000), sOp(opSync), sReadAt(9000, 0))},
		{"write-at-exact-eof", fRDWR, 4096, withStat(sWriteAt(1, 4096), sWriteAt(4095, 4097))},
		{"truncate-down-into-block-then-read", fRDWR, 3*4096 + 4000, withStat(sTruncate(5000), sReadAt(4096, 4096), sRead(9000), sRead(10))},
		{"truncate-down-then-write-past", fRDWR, 8192, withStat(sTruncate(100), sWriteAt(10, 4100), sReadAt(4200, 0))},
		{"truncate-up-then-read-zeros", fRDWR, 100, withStat(sTruncate(9000), sReadAt(9000, 0), sSeek(0, io.SeekEnd))},
		{"truncate-after-padded-write", fRDWR, 0, withStat(sWriteAt(100, 0), sTruncate(50), sWriteAt(10, 4000), sSync())},
		{"append-mode-writes", fAPPEND, 5000, withStat(sWrite(100), sWrite(4096), sSeek(0, io.SeekStart), sWrite(3), sSeekCur(), sRead(10))},
		{"append-mode-writeat-refused", fAPPEND, 100, withStat(sWriteAt(10, 0), sWriteString(7), sSeekCur())},
		{"append-wronly", fWRONLY | 8, 4097, withStat(sWrite(5000), sWriteString(1), sSeekCur(), sRead(1))},
		{"seek-past-end-then-write", fRDWR, 100, withStat(sSeek(6000, io.SeekStart), sWrite(100), sSeekCur(), sSeek(-10, io.SeekEnd), sRead(100))},
		{"seek-end-relative", fRDWR, 5000, withStat(sSeek(-4097, io.SeekEnd), sRead(4096), sSeek(1, io.SeekCurrent), sWrite(4096))},
		{"read-at-eof", fRDWR, 4096, withStat(sReadAt(1, 4096), sReadAt(100, 4000), sSeek(0, io.SeekEnd), sRead(1), sRead(0))},
		{"read-cursor-through-file", fRDONLY, 3*4096 + 123, seq(sRead(4095), sRead(4097), sRead(4000), sRead(4000), sRead(1), sSeekCur())},
		{"zero-length-ops", fRDWR, 5000, withStat(sRead(0), sReadAt(0, 4096), sWrite(0), sWriteAt(0, 9000), sWriteString(0), sSeekCur())},
		{"zero-length-ops-append", fAPPEND, 5000, withStat(sWrite(0), sSeekCur(), sWriteString(0), sSeekCur(), sRead(10))},
		{"negative-offsets", fRDWR, 5000, withStat(sReadAt(10, -1), sWriteAt(10, -4096), sSeek(-1, io.SeekStart), sSeek(-8193, io.SeekEnd), sTruncate(-1), sPrealloc(-1, 10))},
		{"bad-whence", fRDWR, 100, withStat(sSeek(10, 5), sSeek(0, -1), sSeekCur())},
		{"huge-seek", fRDWR, 100, seq(sSeek(1<<62, io.SeekStart), sSeek(math.MaxInt64, io.SeekEnd), sSeekCur())},
		{"readonly-writes-fail", fRDONLY, 5000, withStat(sWrite(10), sWriteAt(10, 0), sWriteString(3), sTruncate(0), sPrealloc(0, 10), sSync())},
		{"writeonly-reads-fail", fWRONLY, 5000, seq(sRead(10), sReadAt(10, 0), sWriteAt(10, 4090), sOp(opStat), sSync())},
		{"writeonly-unaligned-rmw", fWRONLY, 8192, seq(sWriteAt(100, 4000), sWriteAt(1, 8191), sWriteAt(3, 8192), sSync(), sOp(opStat))},
		{"o-trunc", fRDWR | 4, 5000, withStat(sWrite(10), sSync())},
		{"new-file-excl", fRDWR | 0x40, 0, withStat(sWrite(4097), sWriteAt(1, 10000))},
		{"buffered-directoff", fRDWR | 0x30, 5000, withStat(sWriteAt(100, 4000), sTruncate(4500), sWrite(10))},
		{"use-after-close", fRDWR, 5000, seq(sOp(opClose), sRead(10), sReadAt(10, 0), sWrite(10), sWriteAt(10, 0), sSeekCur(), sOp(opStat), sSync(), sTruncate(0), sOp(opClose))},
		{"reopen-variants", fRDWR, 5000, withStat(sWriteAt(100, 4050), sReopen(2), sReadAt(200, 4000), sReopen(7), sReadAt(10, 0), sReopen(6), sWrite(10), sReopen(4), sWrite(5), sReopen(5), sWrite(5))},
		{"preallocate-then-read", fRDWR, 100, withStat(sPrealloc(4000, 5000), sReadAt(9000, 0), sWriteAt(10, 8000), sPrealloc(0, 0))},
		{"datasync-after-padded-write", fRDWR, 5000, withStat(sWriteAt(100, 5000), sOp(opDatasync), sWrite(1))},
		{"unaligned-buffer-aligned-offsets", fRDWR, 3*4096 + 4000, withStat(shifted(sWriteAt(4096, 4096), 1), shifted(sReadAt(8192, 0), 7), shifted(sRead(4096), 15))},
		{"read-write-cursor-mix", fRDWR, 6000, withStat(sRead(100), sWrite(4000), sRead(3000), sWrite(9000), sSeek(-50, io.SeekCurrent), sRead(9000))},
		{"other-append-after-writeat", fRDWR, 100, withStat(sWriteAt(2, 100), oAppend(7), sOp(opClose))},
		{"other-writes-into-kept-block", fRDWR, 0, withStat(sWrite(10), oWriteAt(10, 10), sWrite(10), oAppend(5), sWrite(1), sSync())},
		{"other-truncates-under-appends", fRDWR, 5000, withStat(sWriteAt(100, 5000), oTruncate(5050), sWriteAt(10, 5100), oTruncate(8000), sWriteAt(3, 7000))},
		{"other-appends-to-append-file", fAPPEND, 511, withStat(sWrite(100), oAppend(20), sWrite(4096), sSeekCur(), oAppend(3), sWrite(1))},
		{"other-writes-in-preallocated", fRDWR, 0, withStat(sPrealloc(0, 9000), sWriteAt(100, 0), oWriteAt(50, 200), sWriteAt(100, 100), oWriteAt(10, 4090), sWriteAt(4000, 200))},
	}
}

// TestWriteDiffSeeds writes the seed corpus when DISKIO_WRITE_SEEDS=1.
func TestWriteDiffSeeds(t *testing.T) {
	if os.Getenv("DISKIO_WRITE_SEEDS") != "1" {
		t.Skip("DISKIO_WRITE_SEEDS=1 writes " + diffCorpusDir)
	}
	require.NoError(t, os.MkdirAll(diffCorpusDir, 0o755))
	for _, s := range diffSeeds() {
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(s.encode())) + ")\n"
		require.NoError(t, os.WriteFile(filepath.Join(diffCorpusDir, "seed-"+s.name), []byte(body), 0o644))
	}
}
