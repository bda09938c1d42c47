package main

import (
	"bytes"
	"os"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

//go:noinline
func waitForCommit(wg *sync.WaitGroup) { wg.Wait() }

//go:noinline
func blockInRead(f *os.File) {
	var b [1]byte
	_, _ = f.Read(b[:])
}

// A real trace: one goroutine blocked in a pipe's read (a system call),
// one waiting on a WaitGroup that the reader's end wakes.
func recordTrace(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, trace.Start(&buf))
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	// Fd puts the descriptor in blocking mode: the read is then a system
	// call that blocks, not a wait in the runtime's poller.
	pr.Fd()
	var commit, done sync.WaitGroup
	commit.Add(1)
	done.Add(2)
	go func() { defer done.Done(); waitForCommit(&commit) }()
	go func() {
		defer done.Done()
		blockInRead(pr)
		commit.Done()
	}()
	time.Sleep(20 * time.Millisecond)
	_, err = pw.Write([]byte{1})
	require.NoError(t, err)
	done.Wait()
	trace.Stop()
	return buf.Bytes()
}

func TestReadsARealTrace(t *testing.T) {
	tr := recordTrace(t)

	var out strings.Builder
	require.NoError(t, states(bytes.NewReader(tr), &out, "blockInRead", 6))
	require.Contains(t, out.String(), "Syscall")
	require.Contains(t, out.String(), "blockInRead")

	out.Reset()
	require.NoError(t, wakes(bytes.NewReader(tr), &out, "waitForCommit", 4, time.Millisecond))
	require.Contains(t, out.String(), "1 wake-ups")
	require.Contains(t, out.String(), "woken by sync.(*WaitGroup)")

	out.Reset()
	require.NoError(t, threads(bytes.NewReader(tr), &out, 4))
	require.Contains(t, out.String(), "thread ")

	require.Error(t, states(strings.NewReader("not a trace"), &out, "", 4))
}
