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

// One goroutine keeps several reads in flight: start them all, then wait.
// They reach the kernel in one submission.
func ExampleScheduler_StartReadAt() {
	dir, _ := os.MkdirTemp("", "sched-example")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "data")
	os.WriteFile(name, []byte("aaaabbbbccccdddd"), 0o644)
	f, _ := os.Open(name)
	defer f.Close()

	s, err := sched.New(sched.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	var bufs [4][4]byte
	var calls [4]sched.Call
	for i := range calls {
		calls[i] = s.StartReadAt(int(f.Fd()), bufs[i][:], int64(4*i))
	}
	for i := range calls {
		n, err := calls[i].Wait() // every started call is waited for once
		fmt.Print(string(bufs[i][:n]), err, " ")
	}
	fmt.Println()
	// Output: aaaa<nil> bbbb<nil> cccc<nil> dddd<nil>
}
