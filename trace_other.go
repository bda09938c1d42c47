//go:build !linux

package diskio

import (
	"sync"

	"github.com/diskio-go/diskio/trace"
)

// Outside Linux no scheduler runs (Files use os.File), so there is nothing
// to trace; the API is here so that programs using it build everywhere.

var tracing struct {
	mu  sync.Mutex
	rec *trace.Recorder
}

// StartTracing returns a trace.Recorder, as on Linux; on this system it
// records nothing, since Files do their I/O through os.File.
func StartTracing(cfg trace.Config) (*trace.Recorder, error) {
	tracing.mu.Lock()
	defer tracing.mu.Unlock()
	if tracing.rec == nil {
		tracing.rec = trace.New(cfg)
	}
	return tracing.rec, nil
}

// Tracing returns the recorder StartTracing returned, or nil.
func Tracing() *trace.Recorder {
	tracing.mu.Lock()
	defer tracing.mu.Unlock()
	return tracing.rec
}

// FlushTrace writes the DISKIO_TRACE files; outside Linux there is no
// scheduler to trace and it does nothing.
func FlushTrace() error { return nil }
