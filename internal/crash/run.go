package crash

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/diskio-go/diskio/internal/bench"
)

// Options configure Run.
type Options struct {
	Dir           string        // where the log is written (removed first)
	Iterations    int           // child processes to kill (default 10)
	KillMin       time.Duration // a child is killed this long after it is ready at least (default 5ms)
	KillMax       time.Duration // and at most (default 100ms)
	Seed          uint64        // randomness of records and kill times (0: random)
	AppendOptions               // Path, Seed are set by Run
	// Command starts a child; default: this executable, no arguments.
	// The child must call MaybeChild early (TestMain, or main).
	Command []string
}

// Report is what Run saw.
type Report struct {
	Iterations int
	Acked      uint64 // records acknowledged by the last child: all found intact
	Records    uint64 // records in the log after the last kill
	TornTails  int    // kills that left a partial record (or padding) after the valid prefix
	Bytes      int64  // size of the log after the last kill
	// The most OS threads a child had at once, and of them io_uring
	// workers (iou-wrk), sampled from outside every millisecond.
	PeakThreads, PeakWorkers int
}

func (r Report) String() string {
	return fmt.Sprintf("%d kills, %d records acknowledged, %d found intact, %d torn tails, log %d bytes; children peaked at %d OS threads (%d iou-wrk)",
		r.Iterations, r.Acked, r.Records, r.TornTails, r.Bytes, r.PeakThreads, r.PeakWorkers)
}

const childEnv = "DISKIO_CRASH_CHILD"

type childSpec struct {
	Mode   string // "append": acks on stdout; "client": acks to Addr
	Addr   string
	Append AppendOptions
}

// MaybeChild runs the child side if this process was started as one by
// Run (or by a diskchecker test), and then exits; otherwise it returns at
// once. Call it first thing in main or TestMain.
func MaybeChild() {
	spec := os.Getenv(childEnv)
	if spec == "" {
		return
	}
	var c childSpec
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	var buf [8]byte
	toParent := func(n uint64) error {
		binary.LittleEndian.PutUint64(buf[:], n)
		_, err := os.Stdout.Write(buf[:])
		return err
	}
	var err error
	switch c.Mode {
	case "append":
		err = appendLog(context.Background(), c.Append, toParent)
	case "client":
		err = client(context.Background(), c.Addr, c.Append, toParent)
	default:
		err = fmt.Errorf("unknown mode %q", c.Mode)
	}
	fmt.Fprintln(os.Stderr, "crash child:", err)
	os.Exit(2)
}

// Run appends to a log in o.Dir from a child process, kills the child
// with SIGKILL at a random moment, checks that every record the child
// acknowledged is intact and that the log parses, and does it again
// (the next child recovers the log and goes on), o.Iterations times.
func Run(ctx context.Context, o Options) (Report, error) {
	return run(ctx, o, false)
}

// RunDiskchecker is Run with the acknowledgements going the diskchecker
// way: the child sends them over TCP to a listener (Serve, here on
// loopback) that records them in a file, and Verify checks the log
// against that file after each kill. It tests the listener, the client
// and Verify, which a user runs on two machines to test a real power cut.
func RunDiskchecker(ctx context.Context, o Options) (Report, error) {
	return run(ctx, o, true)
}

func run(ctx context.Context, o Options, checker bool) (Report, error) {
	if o.Iterations <= 0 {
		o.Iterations = 10
	}
	if o.KillMin <= 0 {
		o.KillMin = 5 * time.Millisecond
	}
	if o.KillMax < o.KillMin {
		o.KillMax = max(o.KillMin, 100*time.Millisecond)
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64() | 1
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0))
	o.AppendOptions.defaults()
	o.AppendOptions.Path = filepath.Join(o.Dir, "crash.log")
	o.AppendOptions.Seed = o.Seed
	if err := os.Remove(o.AppendOptions.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Report{}, err
	}
	var rep Report
	for i := range o.Iterations {
		wait := o.KillMin + time.Duration(rng.Int64N(int64(o.KillMax-o.KillMin)+1))
		if checker {
			r, err := diskcheckOnce(ctx, o, wait, &rep)
			rep.Iterations, rep.Acked, rep.Records, rep.Bytes = i+1, r.Acked, r.Records, r.Bytes
			rep.TornTails += r.TornTails
			if err != nil {
				return rep, fmt.Errorf("crash: iteration %d: %w", i, err)
			}
			continue
		}
		acked, err := runChild(ctx, o, childSpec{Mode: "append", Append: o.AppendOptions}, wait, &rep)
		if err != nil {
			return rep, fmt.Errorf("crash: iteration %d: %w", i, err)
		}
		data, err := os.ReadFile(o.AppendOptions.Path)
		if err != nil {
			return rep, err
		}
		p, err := parse(data, o.MaxRecord)
		if err != nil {
			return rep, fmt.Errorf("crash: iteration %d: %w", i, err)
		}
		rep.Iterations, rep.Acked, rep.Records, rep.Bytes = i+1, acked, p.records, int64(len(data))
		if p.torn {
			rep.TornTails++
		}
		if p.records < acked {
			return rep, fmt.Errorf("crash: iteration %d: %d records acknowledged, only %d intact in the log (%d bytes, valid prefix %d)", i, acked, p.records, len(data), p.valid)
		}
	}
	return rep, nil
}

// diskcheckOnce runs one child in client mode against a loopback
// listener, kills it, and verifies the log against the listener's file.
func diskcheckOnce(ctx context.Context, o Options, wait time.Duration, peaks *Report) (Report, error) {
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		return Report{}, err
	}
	ackPath := o.AppendOptions.Path + ".acks"
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- Serve(sctx, ln, ackPath) }()
	acked, err := runChild(ctx, o, childSpec{Mode: "client", Addr: ln.Addr().String(), Append: o.AppendOptions}, wait, peaks)
	stop()
	if serr := <-served; err == nil {
		err = serr
	}
	if err != nil {
		return Report{}, err
	}
	rep, err := Verify(o.AppendOptions.Path, ackPath, o.MaxRecord)
	if err == nil && rep.Acked < acked {
		err = fmt.Errorf("the listener recorded %d acknowledgements, the child sent %d", rep.Acked, acked)
	}
	return rep, err
}

// runChild starts a child, kills it wait after it reported ready, and
// returns the last acknowledgement it wrote before dying. It raises
// peaks' thread counts to the child's.
func runChild(ctx context.Context, o Options, spec childSpec, wait time.Duration, peaks *Report) (uint64, error) {
	js, err := json.Marshal(spec)
	if err != nil {
		return 0, err
	}
	argv := o.Command
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return 0, err
		}
		argv = []string{exe}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	sampled := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			n, w := bench.ThreadsOf(cmd.Process.Pid)
			peaks.PeakThreads = max(peaks.PeakThreads, n)
			peaks.PeakWorkers = max(peaks.PeakWorkers, w)
			select {
			case <-exited:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var acked atomic.Uint64
	ready := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		var buf [8]byte
		first := true
		for {
			if _, err := io.ReadFull(out, buf[:]); err != nil {
				if first {
					close(ready)
				}
				if err == io.EOF {
					err = nil
				}
				readErr <- err
				return
			}
			acked.Store(binary.LittleEndian.Uint64(buf[:]))
			if first {
				first = false
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
	}
	alive := true
	select {
	case err := <-readErr: // the child died by itself
		readErr <- err
		alive = false
	case <-time.After(wait):
	}
	if alive {
		cmd.Process.Kill()
	}
	// Acknowledgements written before the kill are still in the pipe:
	// read to its end before counting.
	rerr := <-readErr
	close(exited)
	<-sampled
	werr := cmd.Wait()
	if !alive {
		return acked.Load(), fmt.Errorf("child exited before it was killed: %v: %s", werr, bytes.TrimSpace(stderr.Bytes()))
	}
	if rerr != nil {
		return acked.Load(), rerr
	}
	return acked.Load(), nil
}
