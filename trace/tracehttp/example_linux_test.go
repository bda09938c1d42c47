//go:build linux

package tracehttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
	"github.com/diskio-go/diskio/trace/tracehttp"
)

func Example() {
	rec := trace.New(trace.Config{})
	s, _ := sched.New(sched.Options{Tracer: rec})
	defer s.Close()

	// In a server: http.Handle("/debug/diskio/trace", tracehttp.Handler(rec))
	srv := httptest.NewServer(tracehttp.Handler(rec))
	defer srv.Close()

	dir, _ := os.MkdirTemp("", "tracehttp-example")
	defer os.RemoveAll(dir)
	f, _ := os.Create(filepath.Join(dir, "data"))
	defer f.Close()
	s.WriteAt(int(f.Fd()), []byte("hello"), 0)

	// seconds=0: what the recorder holds now; seconds=N captures N seconds.
	resp, err := http.Get(srv.URL + "?seconds=0&format=jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.Count(string(body), `"kind":"request"`), "request")
	// Output: 1 request
}
