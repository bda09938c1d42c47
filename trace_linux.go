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

	// What DISKIO_TRACE runs in the background until FlushTrace: stop
	// ends the periodic writer and the signal handler (nil once closed,
	// or when none runs); sigc is the handler's signal.Notify channel.
	stop chan struct{}
	sigc chan os.Signal
	bg   sync.WaitGroup // the periodic writer and the signal handler
}

func init() {
	env, err := traceFromEnv()
	if env.prefix != "" {
		err = errors.Join(err, startEnvTrace(env))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "diskio: DISKIO_TRACE:", err)
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
// recorder holds, and ends what DISKIO_TRACE runs in the background: the
// periodic writer stops, and SIGINT and SIGTERM are the program's again.
// Without DISKIO_TRACE it does nothing. Call it (or defer it in main)
// where the program ends normally: Go runs nothing at exit. Calling it
// again writes what was recorded since.
func FlushTrace() error {
	tracing.mu.Lock()
	defer tracing.mu.Unlock()
	if tracing.stop != nil {
		close(tracing.stop)
		tracing.stop = nil
		if tracing.sigc != nil {
			signal.Stop(tracing.sigc)
		}
	}
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

// envTrace is what the DISKIO_TRACE variables ask for.
type envTrace struct {
	prefix  string        // DISKIO_TRACE, absolute; empty: no tracing
	cfg     trace.Config  // DISKIO_TRACE_RECORDS, _STACKS, _STACK_TABLE
	every   time.Duration // DISKIO_TRACE_EVERY; 0: never
	signals bool          // DISKIO_TRACE_SIGNALS is not 0
}

// traceFromEnv reads the variables listed under Environment in the
// package documentation; it is the only place this package reads the
// environment. A variable it cannot use is named in the error and left at
// its default.
func traceFromEnv() (envTrace, error) {
	e := envTrace{cfg: trace.Config{StackEvery: 16}, every: time.Second}
	p := os.Getenv("DISKIO_TRACE")
	if p == "" {
		return e, nil
	}
	abs, err := filepath.Abs(p) // the program may change directory
	if err != nil {
		return e, err
	}
	e.prefix = abs
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
	envInt("DISKIO_TRACE_RECORDS", &e.cfg.Records)
	envInt("DISKIO_TRACE_STACKS", &e.cfg.StackEvery)
	envInt("DISKIO_TRACE_STACK_TABLE", &e.cfg.Stacks)
	if v := os.Getenv("DISKIO_TRACE_EVERY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("DISKIO_TRACE_EVERY=%q: want a duration such as 1s, or 0 (ignored)", v))
		} else {
			e.every = d
		}
	}
	e.signals = os.Getenv("DISKIO_TRACE_SIGNALS") != "0"
	return e, errors.Join(errs...)
}

// startEnvTrace starts what e asks for: the process-wide scheduler with a
// recorder, a goroutine writing the files every e.every while records
// arrive, and one catching SIGINT and SIGTERM, both until FlushTrace.
func startEnvTrace(e envTrace) error {
	if _, err := StartTracing(e.cfg); err != nil {
		return err
	}
	tracing.mu.Lock()
	defer tracing.mu.Unlock()
	tracing.prefix = e.prefix
	if e.every <= 0 && !e.signals {
		return nil
	}
	stop := make(chan struct{})
	tracing.stop = stop
	if e.every > 0 {
		tracing.bg.Add(1)
		go func() {
			defer tracing.bg.Done()
			t := time.NewTicker(e.every)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				tracing.mu.Lock()
				err := flushTraceLocked(true)
				tracing.mu.Unlock()
				if err != nil {
					fmt.Fprintln(os.Stderr, "diskio: DISKIO_TRACE:", err)
				}
			}
		}()
	}
	if e.signals {
		c := make(chan os.Signal, 1)
		tracing.sigc = c
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
		tracing.bg.Add(1)
		go func() {
			defer tracing.bg.Done()
			var sig os.Signal
			select {
			case <-stop:
				return
			case sig = <-c:
			}
			tracing.mu.Lock()
			err := flushTraceLocked(false)
			tracing.mu.Unlock()
			if err != nil {
				fmt.Fprintln(os.Stderr, "diskio: DISKIO_TRACE:", err)
			}
			// Die of the signal as the program would have without us.
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}()
	}
	return nil
}
