//go:build linux

package sched_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/diskio-go/diskio/sched"
)

func Example() {
	dir, _ := os.MkdirTemp("", "sched-example")
	defer os.RemoveAll(dir)
	f, _ := os.Create(filepath.Join(dir, "log"))
	defer f.Close()

	s, err := sched.New(sched.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	fd := int(f.Fd())
	s.WriteAt(fd, []byte("hello, scheduler"), 0)
	s.Fdatasync(fd)
	buf := make([]byte, 5)
	n, err := s.ReadAt(fd, buf, 7)
	fmt.Println(n, err, string(buf[:n]))
	// Output: 5 <nil> sched
}
