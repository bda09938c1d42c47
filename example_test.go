package diskio_test

import (
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"github.com/diskio-go/diskio"
)

// A File is used like an *os.File: any offset, any length, any buffer,
// whether or not the file is opened with O_DIRECT.
func Example() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	f, err := diskio.Create(filepath.Join(dir, "greeting.txt"))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := f.WriteString("Hello, diskio!\n"); err != nil {
		log.Fatal(err)
	}
	if _, err := f.WriteString("Unaligned writes are fine.\n"); err != nil {
		log.Fatal(err)
	}

	// Back to the second word, and read to the end.
	if _, err := f.Seek(7, io.SeekStart); err != nil {
		log.Fatal(err)
	}
	rest, err := io.ReadAll(f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", rest)

	// Read at an offset; the cursor does not move.
	word := make([]byte, 9)
	if _, err := f.ReadAt(word, 15); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", word)

	fi, err := f.Stat()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("size:", fi.Size())

	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	// The size on disk is exact too.
	fi, err = os.Stat(filepath.Join(dir, "greeting.txt"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("size on disk:", fi.Size())

	// Output:
	// "diskio!\nUnaligned writes are fine.\n"
	// Unaligned
	// size: 42
	// size on disk: 42
}

// DirFS serves a directory as an fs.FS whose regular files are read
// through diskio.
func ExampleDirFS() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		log.Fatal(err)
	}
	for name, text := range map[string]string{
		"logs/a.log": "first\n",
		"logs/b.log": "second\n",
		"readme.txt": "not a log\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}

	fsys := diskio.DirFS(dir)
	logs, err := fs.Glob(fsys, "logs/*.log")
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range logs {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %q\n", name, b)
	}

	_, err = fsys.Open("../outside")
	fmt.Println(err)

	// Output:
	// logs/a.log: "first\n"
	// logs/b.log: "second\n"
	// open ../outside: invalid argument
}
