//go:build linux

package trace

import (
	"cmp"
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

// Stack is one distinct caller stack of the wait profile, with the
// samples taken on it. Each sample stands for Snapshot.StackEvery
// requests.
type Stack struct {
	Op sched.Op
	// Size is the requests' size class: more than Size/2 bytes and at
	// most Size (0: no data).
	Size  int
	Count uint64        // samples
	Wait  time.Duration // enqueue to resume, summed over the samples
	PCs   []uintptr     // from runtime.Callers; the scheduler's own frames included
}

// Snapshot is a copy of what a Recorder holds. Two parts cover different
// windows: the totals (Ops, Calls, Stacks: the summary and the profiles)
// count every event from Start to End; the timeline (Syscalls, Requests:
// the Chrome trace and JSON lines) holds the last records the ring kept,
// from TimelineStart to TimelineEnd, and Dropped says how many it lost.
type Snapshot struct {
	// Start and End bound the snapshot's span (sched.Now values): from
	// the recorder's New, or the Mark, to the snapshot. Time paused is
	// included; nothing was recorded in it.
	Start, End int64

	// Ops and Calls count every request and system call recorded in the
	// span, by op and size class and by call.
	Ops   []OpTotal
	Calls []CallTotal
	// Backends are the backends the requests ran on.
	Backends []sched.Backend

	// Stacks are the wait profile's samples, aggregated by stack.
	Stacks []Stack
	// StackEvery is the stack sampling period: each sample stands for
	// that many requests.
	StackEvery int
	// StackSamples counts the samples taken in the span; StacksDropped
	// those of them not in Stacks, because their stack was new when the
	// table (StackTable entries, Config.Stacks) was full.
	StackSamples, StacksDropped uint64
	StackTable                  int

	// The timeline, ordered by Seq.
	Syscalls []Syscall
	Requests []Request
	// Written counts the records (requests and system calls) written in
	// the span; Dropped those of them the timeline does not hold:
	// overwritten by newer ones when the ring (RingRecords records,
	// Config.Records) was full, or given up by a writer that lost its
	// slot.
	Written, Dropped uint64
	RingRecords      int

	// Fallbacks are the first 64 fallbacks the scheduler reported (see
	// sched.Fallback), from the recorder's start, whatever the span;
	// FallbackCount counts all of them.
	Fallbacks     []sched.Fallback
	FallbackCount int

	files []writtenFile // set by WriteFiles, for the summary
}

// Mark is a point in a Recorder's stream; SnapshotSince keeps what came
// after it.
type Mark struct {
	recs    uint64
	at      int64
	tot     *aggregate
	stacks  []stackCount
	samples uint64
	lost    uint64
}

// Mark returns the current end of the records. It copies the totals
// (about 8 KiB per op and size class seen, 16 bytes per stack entry), so
// that SnapshotSince can subtract them.
func (r *Recorder) Mark() Mark {
	m := Mark{recs: r.recs.head.Load(), at: sched.Now(), tot: r.tot.load()}
	if r.stacks != nil {
		m.lost = r.stacks.lost.Load()
		m.samples = r.stacks.samples.Load()
		m.stacks = r.stacks.counts()
	}
	return m
}

// Snapshot copies everything the recorder holds. It allocates, and may
// run while the recorder records: records being written at that moment
// are not in the timeline (and are counted as dropped).
func (r *Recorder) Snapshot() *Snapshot { return r.SnapshotSince(Mark{at: r.born}) }

// SnapshotSince copies the records written after m, and the totals
// counted since.
func (r *Recorder) SnapshotSince(m Mark) *Snapshot {
	snap := &Snapshot{StackEvery: int(r.stackEvery), Start: m.at, RingRecords: len(r.recs.slots)}
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

	tot := r.tot.load()
	if m.tot != nil {
		tot.sub(m.tot)
	}
	for _, o := range tot.ops {
		snap.Ops = append(snap.Ops, *o)
	}
	slices.SortFunc(snap.Ops, func(a, b OpTotal) int { return cmp.Or(cmp.Compare(a.Op, b.Op), cmp.Compare(a.Size, b.Size)) })
	for c := range tot.calls {
		for _, ct := range tot.calls[c] {
			if ct.Count > 0 {
				snap.Calls = append(snap.Calls, ct)
			}
		}
	}
	for code, b := range backendNames {
		if tot.backends&(1<<code) != 0 && b != "" {
			snap.Backends = append(snap.Backends, b)
		}
	}

	if r.stacks != nil {
		t := r.stacks
		snap.StackTable = len(t.entries)
		snap.StackSamples = t.samples.Load() - m.samples
		snap.StacksDropped = t.lost.Load() - m.lost
		counts := t.counts()
		for i := range t.entries {
			c := counts[i]
			if m.stacks != nil {
				c.count -= m.stacks[i].count
				c.wait -= m.stacks[i].wait
			}
			if c.count == 0 {
				continue
			}
			e := &t.entries[i] // ready: counts saw it so
			snap.Stacks = append(snap.Stacks, Stack{
				Op:    sched.Op(e.key & 255),
				Size:  sizeOfCode(int(e.key >> 8)),
				Count: c.count,
				Wait:  time.Duration(c.wait),
				PCs:   append([]uintptr(nil), e.pcs[:e.depth]...),
			})
		}
	}
	snap.Fallbacks, snap.FallbackCount = r.fallbacks.load()
	snap.End = sched.Now()
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
