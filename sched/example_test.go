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
	if _, err := s.WriteAt(fd, []byte("hello, scheduler"), 0); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Fdatasync(fd); err != nil {
		fmt.Println(err)
		return
	}
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

// A Batch hands many calls to the kernel in one submission and wakes its
// goroutine once when all are done. Writes in one batch must not overlap.
func ExampleBatch() {
	dir, _ := os.MkdirTemp("", "sched-example")
	defer os.RemoveAll(dir)
	f, err := os.Create(filepath.Join(dir, "blocks"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	s, err := sched.New(sched.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	fd := int(f.Fd())
	b := s.Batch()
	var calls []sched.Call
	for i, word := range []string{"one ", "two ", "six "} {
		calls = append(calls, b.StartWriteAt(fd, []byte(word), int64(4*i)))
	}
	b.WaitAll()
	for _, c := range calls {
		if _, err := c.Wait(); err != nil { // returns at once after WaitAll
			fmt.Println(err)
			return
		}
	}
	got := make([]byte, 12)
	n, err := s.ReadAt(fd, got, 0)
	fmt.Printf("%d %v %q\n", n, err, got[:n])
	// Output: 12 <nil> "one two six "
}
