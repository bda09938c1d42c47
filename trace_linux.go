//go:build linux

package diskio

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

// The process-wide scheduler's recorder, from DISKIO_TRACE or StartTracing.
var tracing struct {
	mu      sync.Mutex // serialises writing the files
	rec     *trace.Recorder
	prefix  string // DISKIO_TRACE: where the files go; empty without it
	written uint64 // records written when the files were last written
}

func init() {
	if p := os.Getenv("DISKIO_TRACE"); p != "" {
		if err := traceFromEnv(p); err != nil {
			fmt.Fprintln(os.Stderr, "diskio: DISKIO_TRACE:", err)
		}
	}
}

// StartTracing attaches a new trace.Recorder to the process-wide
// scheduler, the one Files use unless opened WithScheduler, and returns
// it; snapshot it, or serve it with trace/tracehttp. It must be called
// before the first file is opened (it starts the scheduler); after that,
// or when DISKIO_TRACE already did, it returns the recorder in use or an
// error if there is none. For a scheduler of your own, set
// sched.Options.Tracer to a trace.New recorder instead.
func StartTracing(cfg trace.Config) (*trace.Recorder, error) {
	tracing.mu.Lock()
	defer tracing.mu.Unlock()
	if tracing.rec != nil {
		return tracing.rec, nil
	}
	rec := trace.New(cfg)
	if !sched.SetDefaultTracer(rec) {
		return nil, errors.New("diskio: StartTracing: the default scheduler is already running without a tracer (call StartTracing before opening files)")
	}
	if _, err := sched.Default(); err != nil {
		return nil, err
	}
	tracing.rec = rec
	return rec, nil
}

// Tracing returns the process-wide scheduler's recorder, or nil when
// neither DISKIO_TRACE nor StartTracing attached one.
func Tracing() *trace.Recorder {
	tracing.mu.Lock()
	defer tracing.mu.Unlock()
	return tracing.rec
}

// FlushTrace writes the DISKIO_TRACE files now, with everything the
// recorder holds. Without DISKIO_TRACE it does nothing. Call it (or defer
// it in main) where the program ends normally: Go runs nothing at exit.
func FlushTrace() error {
	tracing.mu.Lock()
	defer tracing.mu.Unlock()
	return flushTraceLocked(false)
}

// flushTraceLocked writes the files; if onlyNew, only when records were
// written since the last time.
func flushTraceLocked(onlyNew bool) error {
	if tracing.prefix == "" || tracing.rec == nil {
		return nil
	}
	snap := tracing.rec.Snapshot()
	if onlyNew && snap.Written == tracing.written {
		return nil
	}
	tracing.written = snap.Written
	return snap.WriteFiles(tracing.prefix)
}

// traceFromEnv sets up DISKIO_TRACE=prefix (see the package trace
// documentation for the variables and when the files are written).
func traceFromEnv(prefix string) error {
	abs, err := filepath.Abs(prefix) // the program may change directory
	if err != nil {
		return err
	}
	cfg := trace.Config{StackEvery: 16}
	var errs []error
	envInt := func(name string, dst *int) {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				errs = append(errs, fmt.Errorf("%s=%q: want a count (ignored)", name, v))
				return
			}
			*dst = n
		}
	}
	envInt("DISKIO_TRACE_RECORDS", &cfg.Records)
	envInt("DISKIO_TRACE_STACKS", &cfg.StackEvery)
	envInt("DISKIO_TRACE_STACK_TABLE", &cfg.Stacks)
	every := time.Second
	if v := os.Getenv("DISKIO_TRACE_EVERY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("DISKIO_TRACE_EVERY=%q: want a duration such as 1s, or 0 (ignored)", v))
		} else {
			every = d
		}
	}
	rec, err := StartTracing(cfg)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	tracing.mu.Lock()
	tracing.prefix = abs
	tracing.mu.Unlock()
	_ = rec
	if every > 0 {
		go func() {
			for range time.Tick(every) {
				tracing.mu.Lock()
				err := flushTraceLocked(true)
				tracing.mu.Unlock()
				if err != nil {
					fmt.Fprintln(os.Stderr, "diskio: DISKIO_TRACE:", err)
				}
			}
		}()
	}
	if os.Getenv("DISKIO_TRACE_SIGNALS") != "0" {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
		go func() {
			sig := <-c
			if err := FlushTrace(); err != nil {
				fmt.Fprintln(os.Stderr, "diskio: DISKIO_TRACE:", err)
			}
			// Die of the signal as the program would have without us.
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}()
	}
	return errors.Join(errs...)
}
