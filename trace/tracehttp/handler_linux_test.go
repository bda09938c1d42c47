//go:build linux

package tracehttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
	"github.com/diskio-go/diskio/trace/tracehttp"
)

func TestHandlerCapturesOnlyTheWindow(t *testing.T) {
	rec := trace.New(trace.Config{Paused: true, StackEvery: 1})
	s, err := sched.New(sched.Options{Tracer: rec, NoInline: true})
	require.NoError(t, err)
	defer s.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "data"))
	require.NoError(t, err)
	defer f.Close()
	fd := int(f.Fd())
	buf := make([]byte, 512)

	// Before any capture: a paused recorder keeps nothing.
	_, err = s.WriteAt(fd, buf, 0)
	require.NoError(t, err)
	require.Zero(t, rec.Snapshot().Written)

	srv := httptest.NewServer(tracehttp.Handler(rec))
	defer srv.Close()

	// Keep writing while a 0.3 s capture runs.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.WriteAt(fd, buf, 0); err != nil {
				panic(err)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	resp, err := http.Get(srv.URL + "?seconds=0.3&format=chrome")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	close(stop)
	wg.Wait()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var doc struct{ TraceEvents []struct{ Ph, Name string } }
	require.NoError(t, json.Unmarshal(body, &doc))
	writes := 0
	for _, ev := range doc.TraceEvents {
		if ev.Ph == "b" && ev.Name == "write 512" {
			writes++
		}
	}
	require.Greater(t, writes, 10)

	// Paused again after the capture.
	n := rec.Snapshot().Written
	_, err = s.WriteAt(fd, buf, 0)
	require.NoError(t, err)
	require.Equal(t, n, rec.Snapshot().Written)

	// seconds=0: what is held now, in every format.
	for _, format := range []string{"", "text", "jsonl", "wait", "syscalls"} {
		resp, err := http.Get(srv.URL + "?seconds=0&format=" + format)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", format, body)
		switch format {
		case "", "text":
			require.Contains(t, string(body), "write")
		case "jsonl":
			require.Equal(t, int(n), strings.Count(string(body), "\n"))
		default:
			_, err := profile.ParseData(body)
			require.NoError(t, err, format)
		}
	}

	for _, q := range []string{"seconds=-1", "seconds=x", "seconds=601", "format=svg"} {
		resp, err := http.Get(srv.URL + "?" + q)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
	}
}

func TestHandlerWithoutRecorder(t *testing.T) {
	w := httptest.NewRecorder()
	tracehttp.Handler(nil).ServeHTTP(w, httptest.NewRequest("GET", "/?seconds=0", nil))
	require.Equal(t, http.StatusNotFound, w.Code)
}
