package sched

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

// OptionsFromEnv returns the Options the process-wide scheduler (Default)
// starts with: the zero Options with the environment variables listed in
// the package documentation ("Environment") applied. It is the only place
// the package reads the environment; New does what its Options say. A
// program that starts a scheduler of its own and wants the same variables
// to apply starts from these Options. The error names every variable set
// to a value it cannot use; the Options then hold the others.
func OptionsFromEnv() (Options, error) {
	var opts Options
	var errs []error
	if v := os.Getenv("DISKIO_BACKEND"); v != "" {
		switch b := Backend(v); b {
		case URing, AIO, Blocking:
			opts.Backend = b
		default:
			errs = append(errs, fmt.Errorf("sched: DISKIO_BACKEND=%q: want uring, aio or blocking", v))
		}
	}
	if v := os.Getenv("DISKIO_IOWQ_MAX_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 {
			errs = append(errs, fmt.Errorf("sched: DISKIO_IOWQ_MAX_WORKERS=%q: want a positive count, or negative for the kernel's limits", v))
		} else {
			opts.IOWQMaxWorkers = n
		}
	}
	return opts, errors.Join(errs...)
}
