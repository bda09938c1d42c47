//go:build linux

package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/diskio-go/diskio/trace"
)

// -tracer wait=PREFIX records every diskio request with its caller's stack
// (all of them: StackEvery 1) and writes, per phase, PREFIX-PHASE.wait.pb.gz
// (the I/O-wait profile: go tool pprof -top shows which Pebble code waited
// on disk) and the tracer's other files next to it.
func init() {
	tracers["wait"] = func(prefix string) (phaseTracer, error) {
		if prefix == "" {
			return nil, fmt.Errorf("-tracer wait=PREFIX: the prefix of the files to write")
		}
		return &waitTracer{Recorder: trace.New(trace.Config{Records: 1 << 20, StackEvery: 1, Stacks: 1 << 16}), prefix: prefix}, nil
	}
}

type waitTracer struct {
	*trace.Recorder
	prefix string
}

func (w *waitTracer) Finish(phase string) error {
	name := w.prefix + "-" + strings.ReplaceAll(phase, "/", "-")
	if err := w.Snapshot().WriteFiles(name); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: I/O-wait profile in %s%s\n", phase, name, trace.SuffixWait)
	return nil
}
