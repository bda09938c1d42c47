//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/diskio-go/diskio/internal/crash"
)

// crashModes are the durability subcommands; each has its own flags:
//
//	testbench crash              SIGKILL a child appending checksummed records with Sync, -n times,
//	                             and check that every acknowledged record survived
//	testbench diskcheck          the same, acknowledgements sent over loopback TCP (tests the three below)
//	testbench diskcheck-serve    on a second machine: record the acknowledgements a client sends (-listen, -acks)
//	testbench diskcheck-client   on the machine under test: append to -file, acknowledge to -addr; pull the power
//	testbench diskcheck-verify   after the power comes back: check -file against the -acks file copied from the server
var crashModes = map[string]bool{"crash": true, "diskcheck": true, "diskcheck-serve": true, "diskcheck-client": true, "diskcheck-verify": true}

func runCrash(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("testbench "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".", "directory for the log (crash, diskcheck: a temporary directory in it, removed after)")
	n := fs.Int("n", 20, "children to kill (crash, diskcheck)")
	killMin := fs.Duration("kill-min", 5*time.Millisecond, "earliest kill after the child is ready")
	killMax := fs.Duration("kill-max", 100*time.Millisecond, "latest kill after the child is ready")
	writers := fs.Int("writers", 4, "goroutines appending concurrently")
	fullSync := fs.Bool("sync", false, "Sync (fsync) instead of Datasync")
	prealloc := fs.Bool("prealloc", false, "reserve space ahead with fallocate (keep size)")
	maxRecord := fs.Int("max-record", 9000, "payload bytes of a record at most")
	listen := fs.String("listen", ":7420", "address to listen on (diskcheck-serve)")
	addr := fs.String("addr", "", "the diskcheck-serve machine, ip:port (diskcheck-client; host names are not resolved)")
	file := fs.String("file", "", "the log under test (diskcheck-client, diskcheck-verify)")
	acks := fs.String("acks", "diskcheck.acks", "the acknowledgements file (diskcheck-serve writes it, diskcheck-verify reads it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	ao := crash.AppendOptions{Path: *file, Writers: *writers, MaxRecord: *maxRecord, FullSync: *fullSync, Preallocate: *prealloc}
	switch mode {
	case "crash", "diskcheck":
		if *n <= 0 || *killMin <= 0 || *killMax < *killMin {
			return fmt.Errorf("bad -n %d, -kill-min %v or -kill-max %v", *n, *killMin, *killMax)
		}
		tmp, err := os.MkdirTemp(*dir, "testbench-crash-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		o := crash.Options{Dir: tmp, Iterations: *n, KillMin: *killMin, KillMax: *killMax, AppendOptions: ao}
		start := time.Now()
		run := crash.Run
		if mode == "diskcheck" {
			run = crash.RunDiskchecker
		}
		rep, err := run(ctx, o)
		fmt.Fprintf(stdout, "%s: %v in %v\n", mode, rep, time.Since(start).Round(time.Millisecond))
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, "no acknowledged record lost")
		return nil
	case "diskcheck-serve":
		ln, err := crash.Listen(*listen)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "recording acknowledgements from %v in %s; Ctrl-C to stop\n", ln.Addr(), *acks)
		err = crash.Serve(ctx, ln, *acks)
		if ctx.Err() != nil {
			return nil
		}
		return err
	case "diskcheck-client":
		if *addr == "" || *file == "" {
			return fmt.Errorf("diskcheck-client needs -addr and -file")
		}
		fmt.Fprintf(stdout, "appending to %s, acknowledging to %s; pull the power now and then run diskcheck-verify\n", *file, *addr)
		return crash.Client(ctx, *addr, ao)
	case "diskcheck-verify":
		if *file == "" {
			return fmt.Errorf("diskcheck-verify needs -file")
		}
		rep, err := crash.Verify(*file, *acks, *maxRecord)
		fmt.Fprintf(stdout, "diskcheck-verify: %d records acknowledged, %d intact\n", rep.Acked, rep.Records)
		return err
	}
	return fmt.Errorf("unknown mode %q", mode)
}
