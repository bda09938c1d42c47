//go:build linux

package main

import (
	"github.com/diskio-go/diskio/sched"
	"github.com/diskio-go/diskio/trace"
)

// openTrace starts the tracer -trace PREFIX asks for and returns it with a
// function that writes its files: PREFIX.wait.pb.gz (I/O-wait profile),
// .syscalls.pb.gz, .trace.json (Perfetto), .jsonl and .txt (summary).
// Every diskio run passes the tracer to its scheduler (sched.Options.Tracer,
// behind the syscall counter); os.File runs are not traced (they have no
// scheduler).
var openTrace = func(prefix string) (sched.Tracer, func() error, error) {
	rec := trace.New(trace.Config{Records: 1 << 20})
	return rec, func() error { return rec.Snapshot().WriteFiles(prefix) }, nil
}
