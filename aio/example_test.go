//go:build linux

package aio_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/diskio-go/diskio/aio"
	"github.com/diskio-go/diskio/internal/mem"
)

// Example reads a small file with O_DIRECT through AIO: one 4 KiB read (a
// whole logical block, from page-aligned memory outside the Go heap) that
// comes back short because the file ends first.
func Example() {
	dir, err := os.MkdirTemp("", "aio-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "greeting")
	if err := os.WriteFile(path, []byte("hello, direct I/O\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		log.Fatal(err) // EINVAL here: the file system (tmpfs?) has no O_DIRECT
	}
	defer f.Close()
	buf, err := mem.Map(4096) // must not move while the kernel writes into it
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Unmap(buf)

	ctx, err := aio.Setup(8)
	if err != nil {
		log.Fatal(err) // ENOSYS or EPERM: no AIO here
	}
	defer ctx.Destroy()

	var cb aio.IOCB
	cb.PrepPread(int(f.Fd()), buf, 0)
	cb.Data = 42 // comes back in the event
	if _, err := ctx.Submit([]*aio.IOCB{&cb}); err != nil {
		log.Fatal(err)
	}
	events := make([]aio.IOEvent, 1)
	if _, err := ctx.Wait(1, events, -1); err != nil {
		log.Fatal(err)
	}
	n, err := events[0].Result()
	if err != nil {
		log.Fatal(aio.ExplainEINVAL(err, &cb))
	}
	fmt.Printf("request %d read %d bytes: %s", events[0].Data, n, buf[:n])
	// Output: request 42 read 18 bytes: hello, direct I/O
}
