package diskio_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/diskio-go/diskio"
)

// tempDir is a fresh directory for an example; the returned func removes
// it.
func tempDir() (string, func()) {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	return dir, func() { os.RemoveAll(dir) }
}

// OpenFile takes os.OpenFile's flags and permissions, and options:
// WithDirect says whether O_DIRECT is required, automatic or off.
func ExampleOpenFile() {
	dir, done := tempDir()
	defer done()

	f, err := diskio.OpenFile(filepath.Join(dir, "table.db"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644,
		diskio.WithDirect(diskio.Direct)) // O_DIRECT where the filesystem allows
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	// Any offset and length work. Offsets, lengths and memory aligned to
	// f.Alignment() go to the device as they are, without a copy.
	if _, err := f.WriteAt([]byte("page zero"), 0); err != nil {
		log.Fatal(err)
	}
	fmt.Println("aligned to a 512-byte multiple:", f.Alignment()%512 == 0 || !f.Direct())

	// OpenFile's errors are os.OpenFile's.
	_, err = diskio.OpenFile(filepath.Join(dir, "table.db"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	fmt.Println(os.IsExist(err))

	// Output:
	// aligned to a 512-byte multiple: true
	// true
}

// ReadBuffer returns the bytes in memory of the File's, without a copy;
// Release gives the memory back.
func ExampleFile_ReadBuffer() {
	dir, done := tempDir()
	defer done()
	path := filepath.Join(dir, "data")
	if err := diskio.WriteFile(path, []byte("0123456789abcdef"), 0o644); err != nil {
		log.Fatal(err)
	}
	f, err := diskio.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	b, err := f.ReadBuffer(10, 4)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", b.Bytes())
	b.Release()

	// Past the end: shorter, with io.EOF, as ReadAt.
	b, err = f.ReadBuffer(14, 10)
	fmt.Printf("%s %v\n", b.Bytes(), err)
	b.Release()

	// Output:
	// abcd
	// ef EOF
}

// ReadMany reads many ranges at once, merging neighbours into one read.
func ExampleFile_ReadMany() {
	dir, done := tempDir()
	defer done()
	path := filepath.Join(dir, "index")
	if err := diskio.WriteFile(path, []byte(strings.Repeat("abcdefghij", 1000)), 0o644); err != nil {
		log.Fatal(err)
	}
	f, err := diskio.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	bufs, err := f.ReadMany([]diskio.Range{{Off: 5003, Len: 4}, {Off: 0, Len: 3}, {Off: 5, Len: 2}}, diskio.ReadManyOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range bufs {
		fmt.Printf("%s\n", b.Bytes())
		b.Release()
	}

	// Output:
	// defg
	// abc
	// fg
}

// A StreamReader scans a file with reads kept in flight ahead of the
// reader.
func ExampleFile_NewStreamReader() {
	dir, done := tempDir()
	defer done()
	path := filepath.Join(dir, "log")
	if err := diskio.WriteFile(path, bytes.Repeat([]byte("record\n"), 100000), 0o644); err != nil {
		log.Fatal(err)
	}
	f, err := diskio.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	r, err := f.NewStreamReader(0, diskio.StreamOptions{BufferSize: 128 << 10, ReadAhead: 4})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	fmt.Println(n, err)

	// Output:
	// 700000 <nil>
}

// A StreamWriter writes a file front to back, writing full buffers
// behind the caller.
func ExampleFile_NewStreamWriter() {
	dir, done := tempDir()
	defer done()
	f, err := diskio.Create(filepath.Join(dir, "wal"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	w, err := f.NewStreamWriter(0, diskio.StreamOptions{BufferSize: 64 << 10, ReadAhead: 2})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 10000 {
		fmt.Fprintf(w, "entry %d\n", i)
	}
	if err := w.Sync(); err != nil { // flush, then Sync the File
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fi.Size())

	// Output:
	// 108890
}

// Sync makes the data and the exact size durable; Datasync skips
// metadata not needed to read the data back; WriteAtDSync is one write
// that is durable when it returns.
func ExampleFile_Sync() {
	dir, done := tempDir()
	defer done()
	f, err := diskio.Create(filepath.Join(dir, "journal"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	if _, err := f.WriteString("begin\n"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("sync:", f.Sync())

	if _, err := f.WriteString("commit\n"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("datasync:", f.Datasync())

	n, err := f.WriteAtDSync([]byte("checkpoint\n"), 13)
	fmt.Println("dsync write:", n, err)

	// Output:
	// sync: <nil>
	// datasync: <nil>
	// dsync write: 11 <nil>
}

// Datasync is Sync without the metadata reads do not need.
func ExampleFile_Datasync() {
	dir, done := tempDir()
	defer done()
	f, err := diskio.Create(filepath.Join(dir, "log"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for i := range 3 {
		if _, err := fmt.Fprintf(f, "record %d\n", i); err != nil {
			log.Fatal(err)
		}
		if err := f.Datasync(); err != nil { // group commit: concurrent calls share a flush
			log.Fatal(err)
		}
	}
	b, err := diskio.ReadFile(f.Name())
	fmt.Printf("%q %v\n", b, err)

	// Output:
	// "record 0\nrecord 1\nrecord 2\n" <nil>
}

// WriteAtDSync writes with RWF_DSYNC: no separate flush.
func ExampleFile_WriteAtDSync() {
	dir, done := tempDir()
	defer done()
	f, err := diskio.Create(filepath.Join(dir, "superblock"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	n, err := f.WriteAtDSync(make([]byte, 4096), 0)
	fmt.Println(n, err)

	// Output:
	// 4096 <nil>
}

// Preallocate reserves disk space up front (fallocate): later writes into
// it cannot fail for lack of space, and appends with Datasync get faster.
func ExampleFile_Preallocate() {
	dir, done := tempDir()
	defer done()
	f, err := diskio.Create(filepath.Join(dir, "segment"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	if err := f.Preallocate(0, 64<<20); err != nil {
		log.Fatal(err)
	}
	fi, _ := f.Stat()
	fmt.Println("size:", fi.Size())

	// A log keeps its size and reserves ahead of it instead.
	g, err := diskio.Create(filepath.Join(dir, "wal"))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	if err := g.PreallocateKeepSize(0, 64<<20); err != nil {
		log.Fatal(err)
	}
	fi, _ = g.Stat()
	fmt.Println("size:", fi.Size())

	// Output:
	// size: 67108864
	// size: 0
}

// SyncDir makes a new name durable: after creating or renaming a file,
// sync its directory.
func ExampleSyncDir() {
	dir, done := tempDir()
	defer done()
	tmp := filepath.Join(dir, "manifest.tmp")
	if err := diskio.WriteFile(tmp, []byte("v2"), 0o644); err != nil {
		log.Fatal(err)
	}
	f, err := diskio.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		log.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		log.Fatal(err)
	}
	f.Close()
	if err := os.Rename(tmp, filepath.Join(dir, "manifest")); err != nil {
		log.Fatal(err)
	}
	fmt.Println(diskio.SyncDir(dir))

	// Output:
	// <nil>
}

// io.Copy between Files uses their ReadFrom and WriteTo: large aligned
// chunks, several in flight.
func ExampleFile_ReadFrom() {
	dir, done := tempDir()
	defer done()
	src := filepath.Join(dir, "src")
	if err := diskio.WriteFile(src, bytes.Repeat([]byte("x"), 3<<20+5), 0o644); err != nil {
		log.Fatal(err)
	}
	in, err := diskio.Open(src)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	out, err := diskio.Create(filepath.Join(dir, "dst"))
	if err != nil {
		log.Fatal(err)
	}
	defer out.Close()
	n, err := io.Copy(out, in)
	fmt.Println(n, err)

	// Output:
	// 3145733 <nil>
}

// OSFile is the safe way to an *os.File: the file opened again without
// O_DIRECT, closed on its own. (os.NewFile(f.Fd(), ...) is not: its
// finalizer would close the File's descriptor.)
func ExampleFile_OSFile() {
	dir, done := tempDir()
	defer done()
	f, err := diskio.Create(filepath.Join(dir, "data"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("shared bytes"); err != nil {
		log.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		log.Fatal(err)
	}

	osf, err := f.OSFile()
	if err != nil {
		log.Fatal(err)
	}
	b := make([]byte, 5)
	if _, err := osf.ReadAt(b, 7); err != nil { // unaligned is fine here
		log.Fatal(err)
	}
	osf.Close() // leaves f open
	fmt.Printf("%s\n", b)
	_, err = f.ReadAt(b, 0)
	fmt.Printf("%s %v\n", b, err)

	// Output:
	// bytes
	// share <nil>
}

// NewFile takes over an *os.File (or, through os.NewFile, a descriptor).
func ExampleNewFile() {
	dir, done := tempDir()
	defer done()
	osf, err := os.Create(filepath.Join(dir, "data"))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := osf.WriteString("written by os, "); err != nil {
		log.Fatal(err)
	}
	f, err := diskio.NewFile(osf) // osf is f's now; do not use it
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("then by diskio"); err != nil { // at osf's offset
		log.Fatal(err)
	}
	b, err := diskio.ReadFile(f.Name()) // another reader sees the exact bytes

	fmt.Printf("%s %v\n", b, err)

	// Output:
	// written by os, then by diskio <nil>
}

// CreateTemp, ReadFile and WriteFile are os's, through a File.
func ExampleCreateTemp() {
	dir, done := tempDir()
	defer done()
	f, err := diskio.CreateTemp(dir, "sst-*.tmp")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println(strings.HasPrefix(filepath.Base(f.Name()), "sst-"))

	// Output:
	// true
}

// A Buffer dropped without Release is returned by the garbage collector
// and counted: a growing DroppedBuffers is a leak to fix.
func ExampleDroppedBuffers() {
	fmt.Println(diskio.DroppedBuffers() >= 0)

	// Output:
	// true
}
