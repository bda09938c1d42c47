//go:build linux

package tracehttp

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/diskio-go/diskio/trace"
)

// MaxSeconds bounds a capture.
const MaxSeconds = 600

type format struct {
	contentType string
	file        string
	write       func(*trace.Snapshot, io.Writer) error
}

var formats = map[string]format{
	"text":     {"text/plain; charset=utf-8", "", (*trace.Snapshot).WriteSummary},
	"chrome":   {"application/json", "diskio-trace.json", (*trace.Snapshot).WriteChrome},
	"jsonl":    {"application/jsonl", "diskio-trace.jsonl", (*trace.Snapshot).WriteJSONLines},
	"wait":     {"application/octet-stream", "diskio-wait.pb.gz", (*trace.Snapshot).WriteWaitProfile},
	"syscalls": {"application/octet-stream", "diskio-syscalls.pb.gz", (*trace.Snapshot).WriteSyscallProfile},
}

// Handler serves captures of rec. Query parameters:
//
//	seconds  how long to capture (default 5, at most MaxSeconds); 0 returns
//	         what the recorder holds now without waiting
//	format   text (default: the summary), chrome (Perfetto), jsonl,
//	         wait (pprof I/O-wait profile), syscalls (pprof)
//
// During a capture the recorder is resumed (so a recorder made with
// Config.Paused records only while someone captures) and the result holds
// only what happened during it. A capture ends early, with nothing
// written, when the client goes away.
func Handler(rec *trace.Recorder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec == nil {
			http.Error(w, "diskio: no trace recorder (see diskio.StartTracing or DISKIO_TRACE)", http.StatusNotFound)
			return
		}
		secs := 5.0
		if v := r.FormValue("seconds"); v != "" {
			s, err := strconv.ParseFloat(v, 64)
			if err != nil || s < 0 || s > MaxSeconds {
				http.Error(w, fmt.Sprintf("diskio: bad seconds=%q: want 0 to %d", v, MaxSeconds), http.StatusBadRequest)
				return
			}
			secs = s
		}
		name := r.FormValue("format")
		if name == "" {
			name = "text"
		}
		f, ok := formats[name]
		if !ok {
			http.Error(w, fmt.Sprintf("diskio: unknown format %q: want text, chrome, jsonl, wait or syscalls", name), http.StatusBadRequest)
			return
		}
		var snap *trace.Snapshot
		if secs == 0 {
			snap = rec.Snapshot()
		} else {
			rec.Resume()
			m := rec.Mark()
			t := time.NewTimer(time.Duration(secs * float64(time.Second)))
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				rec.Pause()
				return
			}
			snap = rec.SnapshotSince(m)
			rec.Pause()
		}
		w.Header().Set("Content-Type", f.contentType)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if f.file != "" {
			w.Header().Set("Content-Disposition", `attachment; filename="`+f.file+`"`)
		}
		if err := f.write(snap, w); err != nil {
			// Headers are gone; all that is left is to cut the body.
			panic(http.ErrAbortHandler)
		}
	})
}
