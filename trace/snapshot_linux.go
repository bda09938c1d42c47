//go:build linux

package trace

import (
	"slices"
	"syscall"
	"time"

	"github.com/diskio-go/diskio/sched"
)

// Syscall is one recorded system call. Times are sched.Now values
// (nanoseconds on the tracer clock).
type Syscall struct {
	Seq        uint64 // order of recording, shared with requests
	Call       sched.Syscall
	Start, End int64
	Submitted  int  // requests handed to the kernel
	Reaped     int  // completions ready right after it
	Wait       bool // slept until a completion arrived
}

// Duration is the time spent in the call.
func (s Syscall) Duration() time.Duration { return time.Duration(s.End - s.Start) }

// Request is one recorded request: what it was, how it ended, and its
// timeline (sched.Now values): Enqueue (the caller handed it over),
// Submit (first given to the kernel), Complete (final completion reaped),
// Resume (the caller running again).
type Request struct {
	Seq     uint64
	Op      sched.Op
	Fd      int32
	Off     int64
	Len, N  int
	Backend sched.Backend
	Inline  bool // issued by the caller with a blocking system call
	Fixed   bool // used a registered buffer
	Submits int  // times submitted (more than one after short I/O)
	Errno   syscall.Errno

	Enqueue, Submit, Complete, Resume int64
}

// Latency is the caller's whole wait.
func (r Request) Latency() time.Duration { return time.Duration(r.Resume - r.Enqueue) }

// Queue is the time before the request reached the kernel.
func (r Request) Queue() time.Duration { return time.Duration(r.Submit - r.Enqueue) }

// Kernel is the time from submission to the completion being reaped.
func (r Request) Kernel() time.Duration { return time.Duration(r.Complete - r.Submit) }

// Wake is the time from the completion to the caller running again.
func (r Request) Wake() time.Duration { return time.Duration(r.Resume - r.Complete) }

// Stack is one sampled caller stack and the request it waited for.
type Stack struct {
	Seq  uint64 // the request's Seq
	Op   sched.Op
	Len  int
	Wait time.Duration // enqueue to resume
	PCs  []uintptr     // from runtime.Callers; the scheduler's own frames included
}

// Snapshot is a copy of a Recorder's records, ordered by Seq.
type Snapshot struct {
	Syscalls []Syscall
	Requests []Request
	Stacks   []Stack
	// StackEvery is the stack sampling period: each Stack stands for
	// that many requests.
	StackEvery int
	// Written counts the records written in the snapshot's span;
	// Dropped those of them it does not hold: overwritten by newer
	// ones when the ring was full, or given up by a writer that lost
	// its slot. StacksDropped is the same for stack samples.
	Written, Dropped uint64
	StacksDropped    uint64
}

// Mark is a point in a Recorder's stream; SnapshotSince keeps what came
// after it.
type Mark struct{ recs, stacks uint64 }

// Mark returns the current end of the records.
func (r *Recorder) Mark() Mark {
	m := Mark{recs: r.recs.head.Load()}
	if r.stacks != nil {
		m.stacks = r.stacks.head.Load()
	}
	return m
}

// Snapshot copies every record the recorder holds. It allocates, and may
// run while the recorder records: records being written at that moment
// are not included (and are counted as dropped).
func (r *Recorder) Snapshot() *Snapshot { return r.SnapshotSince(Mark{}) }

// SnapshotSince copies the records written after m.
func (r *Recorder) SnapshotSince(m Mark) *Snapshot {
	snap := &Snapshot{StackEvery: int(r.stackEvery)}
	end := r.recs.head.Load()
	var w [7]uint64
	for i := range uint64(len(r.recs.slots)) {
		t, ok := r.recs.load(i, &w)
		if !ok || t < m.recs || t >= end {
			continue
		}
		switch w[0] & 3 {
		case kindSyscall:
			snap.Syscalls = append(snap.Syscalls, decodeSyscall(t, &w))
		case kindRequest:
			snap.Requests = append(snap.Requests, decodeRequest(t, &w))
		}
	}
	slices.SortFunc(snap.Syscalls, func(a, b Syscall) int { return cmpSeq(a.Seq, b.Seq) })
	slices.SortFunc(snap.Requests, func(a, b Request) int { return cmpSeq(a.Seq, b.Seq) })
	snap.Written = end - min(m.recs, end)
	snap.Dropped = snap.Written - uint64(len(snap.Syscalls)+len(snap.Requests))
	if r.stacks != nil {
		sEnd := r.stacks.head.Load()
		for i := range r.stacks.slots {
			if st, ok := r.stacks.load(i); ok && st.t >= m.stacks && st.t < sEnd {
				snap.Stacks = append(snap.Stacks, st.Stack)
			}
		}
		slices.SortFunc(snap.Stacks, func(a, b Stack) int { return cmpSeq(a.Seq, b.Seq) })
		snap.StacksDropped = sEnd - min(m.stacks, sEnd) - uint64(len(snap.Stacks))
	}
	return snap
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func decodeSyscall(t uint64, w *[7]uint64) Syscall {
	return Syscall{
		Seq:       t,
		Call:      sched.Syscall(w[0] >> 2 & 63),
		Wait:      w[0]>>8&1 != 0,
		Start:     int64(w[1]),
		End:       int64(w[2]),
		Submitted: int(w[3]),
		Reaped:    int(w[4]),
	}
}

func decodeRequest(t uint64, w *[7]uint64) Request {
	m := w[0]
	return Request{
		Seq:      t,
		Op:       sched.Op(m >> 2 & 15),
		Backend:  backendNames[m>>6&3],
		Inline:   m>>8&1 != 0,
		Fixed:    m>>9&1 != 0,
		Submits:  int(m >> 10 & 255),
		Errno:    syscall.Errno(m >> 18 & (1<<errnoBits - 1)),
		Fd:       int32(uint32(m >> 32)),
		Off:      int64(w[1]),
		Len:      int(uint32(w[2])),
		N:        int(w[2] >> 32),
		Enqueue:  int64(w[3]),
		Submit:   int64(w[4]),
		Complete: int64(w[5]),
		Resume:   int64(w[6]),
	}
}

type loadedStack struct {
	Stack
	t uint64
}

func (r *stackRing) load(i int) (loadedStack, bool) {
	s := &r.slots[i]
	s1 := s.seq.Load()
	if s1 == 0 || s1&busy != 0 {
		return loadedStack{}, false
	}
	meta := s.meta.Load()
	depth := min(int(meta>>8&255), maxDepth)
	st := Stack{
		Seq:  s.ticket.Load(),
		Op:   sched.Op(meta & 255),
		Len:  int(meta >> 32),
		Wait: time.Duration(s.wait.Load()),
		PCs:  make([]uintptr, depth),
	}
	for j := range st.PCs {
		st.PCs[j] = s.pcs[j].Load()
	}
	if s.seq.Load() != s1 {
		return loadedStack{}, false
	}
	return loadedStack{st, s1 - 1}, true
}
