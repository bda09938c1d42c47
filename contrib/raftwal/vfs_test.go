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
)

func modes() []Mode { return []Mode{PageCache, Direct} }

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

// The direct mode's tail cache serves what os would: random writes
// (appends mostly, some rewinds and jumps) and reads of random ranges of
// the written part, compared with a file written through os.
func TestTailCacheMatchesFile(t *testing.T) {
	for _, tc := range []int{-1, 1000, 4096, 1 << 16} {
		dir := t.TempDir()
		v := New(Options{Mode: Direct, TailCache: tc})
		w, err := v.Create(dir, "t.wal", 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		ref := make([]byte, 1<<20)
		rng := rand.New(rand.NewPCG(1, uint64(tc)))
		off := int64(0)
		hi := int64(0)
		for i := 0; i < 3000; i++ {
			n := 1 + rng.IntN(600)
			switch r := rng.IntN(100); {
			case r < 3:
				off = rng.Int64N(hi + 1)
			case r < 5:
				off = min(hi+rng.Int64N(5000), int64(len(ref))-1)
			}
			if off+int64(n) > int64(len(ref)) {
				off = 0
			}
			p := make([]byte, n)
			for j := range p {
				p[j] = byte(rng.Uint32())
			}
			if _, err := w.WriteAt(p, off); err != nil {
				t.Fatal(err)
			}
			copy(ref[off:], p)
			off += int64(n)
			hi = max(hi, off)
			for k := 0; k < 3; k++ {
				ln := 1 + rng.IntN(2000)
				at := max(0, hi-int64(ln)-rng.Int64N(min(hi, 70000)+1))
				got := make([]byte, ln)
				if _, err := w.ReadAt(got, at); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, ref[at:at+int64(ln)]) {
					t.Fatalf("tail %d: ReadAt(%d, %d) differs after %d writes", tc, ln, at, i)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "t.wal"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, ref) {
			t.Fatalf("tail %d: the file differs from the reference", tc)
		}
	}
}
