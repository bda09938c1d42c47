//go:build linux

package trace

import (
	"bufio"
	"io"
	"strconv"

	"github.com/diskio-go/diskio/sched"
)

// onCaller says whether a call runs on a caller's goroutine rather than
// the scheduler loop: blocking calls and the producers' wake-ups.
func onCaller(c sched.Syscall) bool {
	switch c {
	case sched.SysURingEnter, sched.SysIOSubmit, sched.SysIOGetevents:
		return false
	}
	return true
}

// Thread ids in the Chrome trace.
const (
	tidLoop    = 1
	tidCallers = 2
)

// WriteChrome writes the snapshot in the Chrome trace-event JSON format,
// which Perfetto (ui.perfetto.dev) and chrome://tracing open: the
// scheduler loop's system calls as slices on one track, calls made on
// callers' goroutines on another, and each request as an async span
// (named "read 4096" and so on) with three nested phases, queued, kernel
// and wake-up. Times are microseconds on the tracer clock.
func (s *Snapshot) WriteChrome(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := make([]byte, 0, 512)
	b = append(b, `{"displayTimeUnit":"ns","otherData":{"source":"diskio/trace","written":`...)
	b = strconv.AppendUint(b, s.Written, 10)
	b = append(b, `,"dropped":`...)
	b = strconv.AppendUint(b, s.Dropped, 10)
	b = append(b, "},\"traceEvents\":[\n"...)
	b = append(b, `{"ph":"M","pid":1,"name":"process_name","args":{"name":"diskio"}},`+"\n"...)
	b = append(b, `{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"scheduler loop"}},`+"\n"...)
	b = append(b, `{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"callers (blocking calls, wake-ups)"}}`...)
	for _, c := range s.Syscalls {
		tid := tidLoop
		if onCaller(c.Call) {
			tid = tidCallers
		}
		b = append(b, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":"...)
		b = strconv.AppendInt(b, int64(tid), 10)
		b = append(b, `,"cat":"syscall","name":"`...)
		b = append(b, c.Call.String()...)
		b = append(b, `","ts":`...)
		b = appendMicros(b, c.Start)
		b = append(b, `,"dur":`...)
		b = appendMicros(b, c.End-c.Start)
		b = append(b, `,"args":{"submitted":`...)
		b = strconv.AppendInt(b, int64(c.Submitted), 10)
		b = append(b, `,"reaped":`...)
		b = strconv.AppendInt(b, int64(c.Reaped), 10)
		b = append(b, `,"wait":`...)
		b = strconv.AppendBool(b, c.Wait)
		b = append(b, "}}"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		b = b[:0]
	}
	for _, r := range s.Requests {
		name := r.Op.String() + " " + strconv.Itoa(r.Len)
		b = appendAsync(b, "b", "request", name, r.Seq, r.Enqueue)
		b = b[:len(b)-1] // reopen the object for args
		b = append(b, `,"args":{"fd":`...)
		b = strconv.AppendInt(b, int64(r.Fd), 10)
		b = append(b, `,"off":`...)
		b = strconv.AppendInt(b, r.Off, 10)
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, int64(r.N), 10)
		b = append(b, `,"backend":"`...)
		b = append(b, r.Backend...)
		b = append(b, `","inline":`...)
		b = strconv.AppendBool(b, r.Inline)
		b = append(b, `,"fixed":`...)
		b = strconv.AppendBool(b, r.Fixed)
		b = append(b, `,"submits":`...)
		b = strconv.AppendInt(b, int64(r.Submits), 10)
		if r.Errno != 0 {
			b = append(b, `,"errno":`...)
			b = strconv.AppendInt(b, int64(r.Errno), 10)
		}
		b = append(b, "}}"...)
		if !r.Inline {
			b = appendAsync(b, "b", "request", "queued", r.Seq, r.Enqueue)
			b = appendAsync(b, "e", "request", "queued", r.Seq, r.Submit)
		}
		b = appendAsync(b, "b", "request", "kernel", r.Seq, r.Submit)
		b = appendAsync(b, "e", "request", "kernel", r.Seq, r.Complete)
		if !r.Inline {
			b = appendAsync(b, "b", "request", "wake-up", r.Seq, r.Complete)
			b = appendAsync(b, "e", "request", "wake-up", r.Seq, r.Resume)
		}
		b = appendAsync(b, "e", "request", name, r.Seq, r.Resume)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		b = b[:0]
	}
	b = append(b, "\n]}\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

func appendAsync(b []byte, ph, cat, name string, id uint64, ts int64) []byte {
	b = append(b, ",\n{\"ph\":\""...)
	b = append(b, ph...)
	b = append(b, `","pid":1,"tid":2,"cat":"`...)
	b = append(b, cat...)
	b = append(b, `","name":"`...)
	b = append(b, name...)
	b = append(b, `","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"ts":`...)
	b = appendMicros(b, ts)
	return append(b, '}')
}

// appendMicros writes ns as microseconds with three decimals.
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	frac := ns % 1000
	return append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}
