//go:build linux

package uring_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/diskio-go/diskio/internal/mem"
	"github.com/diskio-go/diskio/uring"
)

// Read a file through the ring: take an SQE, prepare it, submit and wait in
// one system call, then reap the completion.
func Example() {
	dir, _ := os.MkdirTemp("", "uring-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hello")
	os.WriteFile(path, []byte("hello, io_uring"), 0o600)
	f, _ := os.Open(path)
	defer f.Close()

	r, err := uring.Setup(8, nil)
	if err != nil {
		fmt.Println("io_uring unavailable:", err)
		return
	}
	defer r.Close()

	// Memory the kernel writes into must not move: map it outside the heap.
	buf, _ := mem.Map(4096)
	defer mem.Unmap(buf)

	sqe := r.GetSQE()
	sqe.PrepRead(int(f.Fd()), buf, 0)
	sqe.UserData = 1
	if _, err := r.SubmitAndWait(1); err != nil {
		fmt.Println(err)
		return
	}
	var cqes [1]uring.CQE
	n, _ := r.ReapCQEs(cqes[:])
	c := cqes[0]
	fmt.Println(n, c.UserData, c.Err(), string(buf[:c.Res]))
	// Output: 1 1 <nil> hello, io_uring
}
