package diskio_test

import (
	"fmt"
	"log"
	"os"

	"github.com/diskio-go/diskio"
)

// A Root opens user-named paths as os.Root does, refusing those that
// lead out of its directory, and returns diskio Files.
func ExampleOpenRoot() {
	dir, err := os.MkdirTemp("", "diskio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	root, err := diskio.OpenRoot(dir, diskio.WithDirect(diskio.Direct))
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()
	if err := root.WriteFile("upload.bin", []byte("payload"), 0o644); err != nil {
		log.Fatal(err)
	}
	data, err := root.ReadFile("upload.bin")
	fmt.Println(string(data), err)

	_, err = root.Open("../../etc/passwd")
	fmt.Println(err)
	// Output:
	// payload <nil>
	// openat ../../etc/passwd: path escapes from parent
}
