package raftwal

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft-wal/types"

	"github.com/diskio-go/diskio"
)

func modes() []diskio.DirectMode { return []diskio.DirectMode{diskio.PageCache, diskio.Direct} }

// Create is O_EXCL and preallocates; Delete removes; errors are os's.
func TestCreateExclPreallocate(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.String(), func(t *testing.T) {
			dir := t.TempDir()
			v := New(Options{Mode: m})
			w, err := v.Create(dir, "a.wal", 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(filepath.Join(dir, "a.wal"))
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != 1<<20 {
				t.Fatalf("size %d after Create, want %d", st.Size(), 1<<20)
			}
			if _, err := v.Create(dir, "a.wal", 0); !errors.Is(err, fs.ErrExist) {
				t.Fatalf("second Create: %v, want ErrExist", err)
			}
			if _, err := v.Create(dir, "big.wal", 1<<32); err == nil {
				t.Fatal("Create of 4 GiB succeeded")
			}
			if _, err := os.Stat(filepath.Join(dir, "big.wal")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a refused Create left a file: %v", err)
			}
			if _, err := w.WriteAt([]byte("hello"), 4095); err != nil {
				t.Fatal(err)
			}
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := w.WriteAt([]byte("x"), 0); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("WriteAt after Close: %v, want ErrClosed", err)
			}
			r, err := v.OpenReader(dir, "a.wal")
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 5)
			if _, err := r.ReadAt(buf, 4095); err != nil || string(buf) != "hello" {
				t.Fatalf("ReadAt: %q, %v", buf, err)
			}
			if _, err := r.ReadAt(buf, 1<<20-2); err != io.EOF {
				t.Fatalf("ReadAt across the end: %v, want io.EOF", err)
			}
			r.Close()
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			names, err := v.ListDir(dir)
			if err != nil || len(names) != 1 || names[0] != "a.wal" {
				t.Fatalf("ListDir: %q, %v", names, err)
			}
			if err := v.Delete(dir, "a.wal"); err != nil {
				t.Fatal(err)
			}
			if err := v.Delete(dir, "a.wal"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("second Delete: %v", err)
			}
			var pe *fs.PathError
			if _, err := v.OpenWriter(dir, "a.wal"); !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("OpenWriter of a removed file: %v", err)
			}
			if _, err := v.ListDir(filepath.Join(dir, "none")); err == nil {
				t.Fatal("ListDir of a missing directory succeeded")
			}
		})
	}
}

// The direct mode's caches serve what the file would: random writes
// (appends mostly, some rewinds and jumps) and reads of random ranges,
// most of them raft-wal's 64 KiB reads running past what was written and
// some past the file's end, compared with a reference; then the same
// through OpenWriter (a file that is not fresh) and OpenReader.
func TestCacheMatchesFile(t *testing.T) {
	for _, tc := range []int{-1, 1000, 1 << 20, -2} {
		dir := t.TempDir()
		v := New(Options{Mode: diskio.Direct, TailCache: tc})
		if tc == -2 { // the page-cache mode's cache
			v = New(Options{Mode: diskio.PageCache, TailCache: DefaultTailCache})
		}
		const size = 3<<20 + 100
		ref := make([]byte, size)
		rng := rand.New(rand.NewPCG(1, uint64(tc)))
		check := func(what string, r interface {
			ReadAt([]byte, int64) (int, error)
		}, hi int64, i int) {
			t.Helper()
			for k := 0; k < 3; k++ {
				ln := 1 + rng.IntN(2000)
				if rng.IntN(2) == 0 {
					ln = 64 << 10
				}
				at := max(0, hi-int64(rng.IntN(2000))-rng.Int64N(min(hi, 1<<20)+1))
				if rng.IntN(20) == 0 {
					at = size - int64(rng.IntN(70000))
				}
				got := make([]byte, ln)
				n, err := r.ReadAt(got, at)
				want := min(int64(ln), size-at)
				var wantErr error
				if want < int64(ln) {
					wantErr = io.EOF
				}
				if int64(n) != want || err != wantErr || !bytes.Equal(got[:n], ref[at:at+int64(n)]) {
					t.Fatalf("cache %d, %s: ReadAt(%d, %d) = %d, %v, want %d, %v (equal %v) after %d writes",
						tc, what, ln, at, n, err, want, wantErr, bytes.Equal(got[:n], ref[at:at+int64(n)]), i)
				}
			}
		}
		write := func(w types.WritableFile, hi *int64, off *int64, i int) {
			n := 1 + rng.IntN(3000)
			switch r := rng.IntN(100); {
			case r < 3:
				*off = rng.Int64N(*hi + 1)
			case r < 5:
				*off = min(*hi+rng.Int64N(300000), size-1)
			}
			if *off+int64(n) > size {
				*off = 0
			}
			p := make([]byte, n)
			for j := range p {
				p[j] = byte(rng.Uint32())
			}
			if _, err := w.WriteAt(p, *off); err != nil {
				t.Fatal(err)
			}
			copy(ref[*off:], p)
			*off += int64(n)
			*hi = max(*hi, *off)
		}
		w, err := v.Create(dir, "t.wal", size)
		if err != nil {
			t.Fatal(err)
		}
		var off, hi int64
		for i := 0; i < 1000; i++ {
			write(w, &hi, &off, i)
			check("Create", w, hi, i)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		w, err = v.OpenWriter(dir, "t.wal")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 500; i++ {
			write(w, &hi, &off, i)
			check("OpenWriter", w, hi, i)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := v.OpenReader(dir, "t.wal")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 500; i++ {
			check("OpenReader", r, hi, i)
		}
		r.Close()
		b, err := os.ReadFile(filepath.Join(dir, "t.wal"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, ref) {
			t.Fatalf("cache %d: the file differs from the reference", tc)
		}
	}
}

// ParseMode and the package's mode names are diskio's, as they were.
func TestModeNames(t *testing.T) {
	for s, want := range map[string]Mode{"pagecache": PageCache, "direct": Direct, "direct-required": diskio.DirectRequired} {
		if m, err := ParseMode(s); err != nil || m != want || m.String() != s {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", s, m, err, want)
		}
	}
	if _, err := ParseMode("fs"); err == nil {
		t.Error(`ParseMode("fs") succeeded`)
	}
	if (Options{}).Mode != diskio.PageCache {
		t.Error("the zero Options are not the page-cache mode")
	}
}
