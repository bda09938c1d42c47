package crash

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Serve is the listener of the diskchecker method: it runs on a machine
// that keeps its power, and appends every acknowledgement a Client sends
// to logPath ("<records>\n", records 0..n-1 durable). After the client's
// machine lost power and came back, Verify checks its log against this
// file. Serve returns when ctx ends or ln fails.
func Serve(ctx context.Context, ln *Listener, logPath string) error {
	out, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	var mu sync.Mutex
	defer context.AfterFunc(ctx, func() { ln.Close() })()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				n, ok := strings.CutPrefix(sc.Text(), "ack ")
				if !ok {
					continue
				}
				mu.Lock()
				// The listener's machine does not lose power; its
				// page cache is durable enough, and each line is
				// one write, so a reader never sees half of one.
				out.WriteString(n + "\n")
				mu.Unlock()
			}
		}()
	}
}

// Client appends records to o.Path as Run's child does, and sends each
// acknowledgement to the listener at addr ("ack <records>\n") once the
// records are durable. It runs until ctx ends, an error, or the power
// goes.
func Client(ctx context.Context, addr string, o AppendOptions) error {
	return client(ctx, addr, o, nil)
}

// client is Client; local, if set, is also told every acknowledgement,
// after the listener.
func client(ctx context.Context, addr string, o AppendOptions, local func(uint64) error) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if o.Seed == 0 {
		o.Seed = uint64(os.Getpid())<<32 | 1
	}
	return appendLog(ctx, o, func(n uint64) error {
		if _, err := c.Write([]byte("ack " + strconv.FormatUint(n, 10) + "\n")); err != nil || local == nil {
			return err
		}
		return local(n)
	})
}

// Verify checks the log at dataPath against the acknowledgements the
// listener recorded in ackPath: every acknowledged record must be intact.
// maxRecord is the client's AppendOptions.MaxRecord (0: the default).
func Verify(dataPath, ackPath string, maxRecord int) (Report, error) {
	if maxRecord <= 0 {
		maxRecord = (&AppendOptions{}).maxRecord()
	}
	acks, err := os.ReadFile(ackPath)
	if err != nil {
		return Report{}, err
	}
	var acked uint64
	for _, l := range strings.Fields(string(acks)) {
		n, err := strconv.ParseUint(l, 10, 64)
		if err != nil {
			return Report{}, fmt.Errorf("crash: %s: bad line %q", ackPath, l)
		}
		acked = max(acked, n)
	}
	data, err := os.ReadFile(dataPath)
	if err != nil {
		return Report{}, err
	}
	p, err := parse(data, maxRecord)
	rep := Report{Acked: acked, Records: p.records, Bytes: int64(len(data))}
	if p.torn {
		rep.TornTails = 1
	}
	if err != nil {
		return rep, err
	}
	if p.records < acked {
		return rep, fmt.Errorf("crash: %d records acknowledged, only %d intact in %s: the disk or the stack lost acknowledged writes", acked, p.records, dataPath)
	}
	return rep, nil
}
