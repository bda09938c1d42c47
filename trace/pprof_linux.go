//go:build linux

package trace

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Frames of the scheduler and of the Recorder are not the caller's: a
// stack sample starts at the first frame outside them.
var ownPackages = []string{
	"github.com/diskio-go/diskio/sched.",
	"github.com/diskio-go/diskio/trace.(*Recorder).",
}

func ownFrame(fn string) bool {
	for _, p := range ownPackages {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// profileBuilder interns functions and locations of one profile.
type profileBuilder struct {
	p     *profile.Profile
	funcs map[string]*profile.Function
	locs  map[locKey]*profile.Location
}

type locKey struct {
	pc   uintptr
	fn   string
	line int
}

func newProfileBuilder(p *profile.Profile) *profileBuilder {
	return &profileBuilder{p: p, funcs: map[string]*profile.Function{}, locs: map[locKey]*profile.Location{}}
}

func (b *profileBuilder) function(name, file string) *profile.Function {
	if f, ok := b.funcs[name]; ok {
		return f
	}
	f := &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: file}
	b.p.Function = append(b.p.Function, f)
	b.funcs[name] = f
	return f
}

func (b *profileBuilder) location(pc uintptr, fn, file string, line int, m *profile.Mapping) *profile.Location {
	k := locKey{pc, fn, line}
	if l, ok := b.locs[k]; ok {
		return l
	}
	l := &profile.Location{
		ID:      uint64(len(b.p.Location) + 1),
		Mapping: m,
		Address: uint64(pc),
		Line:    []profile.Line{{Function: b.function(fn, file), Line: int64(line)}},
	}
	b.p.Location = append(b.p.Location, l)
	b.locs[k] = l
	return l
}

// WaitProfile is the I/O-wait profile: the sampled requests' caller
// stacks, with the number of requests and the time they waited (enqueue
// to resume), scaled by the sampling period as Go's own sampled profiles
// are. It covers the snapshot's whole span (Start to End), less the
// samples counted in StacksDropped. Stacks start at the first frame
// outside diskio's scheduler, so the leaf is the function that called it
// (for example diskio.(*File).ReadAt, or your own code calling sched
// directly). Samples are labelled with the op and the size class (bytes,
// the upper bound). No stacks (Config.StackEvery 0): an empty profile.
func (s *Snapshot) WaitProfile() *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "requests", Unit: "count"},
			{Type: "wait", Unit: "nanoseconds"},
		},
		DefaultSampleType: "wait",
		PeriodType:        &profile.ValueType{Type: "requests", Unit: "count"},
		Period:            int64(max(s.StackEvery, 1)),
		DurationNanos:     s.End - s.Start,
		Comments: []string{
			"diskio I/O wait: one request of every StackEvery sampled, scaled by StackEvery",
			fmt.Sprintf("%d samples over %v, %d dropped (stack table full)", s.StackSamples, time.Duration(s.End-s.Start).Round(time.Millisecond), s.StacksDropped),
		},
	}
	exe, _ := os.Executable()
	m := &profile.Mapping{ID: 1, Start: 0, Limit: ^uint64(0), File: exe, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	p.Mapping = []*profile.Mapping{m}
	b := newProfileBuilder(p)
	scale := int64(max(s.StackEvery, 1))
	for _, st := range s.Stacks {
		var locs []*profile.Location
		frames := runtime.CallersFrames(st.PCs)
		skipping := true
		for {
			f, more := frames.Next()
			if f.Function != "" && !(skipping && ownFrame(f.Function)) {
				skipping = false
				locs = append(locs, b.location(f.PC, f.Function, f.File, f.Line, m))
			}
			if !more {
				break
			}
		}
		if len(locs) == 0 {
			continue
		}
		p.Sample = append(p.Sample, &profile.Sample{
			Location: locs,
			Value:    []int64{scale * int64(st.Count), scale * int64(st.Wait)},
			Label:    map[string][]string{"op": {st.Op.String()}},
			NumLabel: map[string][]int64{"bytes": {int64(st.Size)}},
			NumUnit:  map[string][]string{"bytes": {"bytes"}},
		})
	}
	return p
}

// SyscallProfile is the system-call profile over the snapshot's whole
// span (Start to End): one sample per call, with count, time in the
// kernel, and requests submitted and reaped, on a two-frame stack "where / call" (where: the scheduler loop, or a caller
// for blocking calls and wake-ups), labelled wait=true for calls that
// slept until a completion.
func (s *Snapshot) SyscallProfile() *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "calls", Unit: "count"},
			{Type: "time", Unit: "nanoseconds"},
			{Type: "submitted", Unit: "count"},
			{Type: "reaped", Unit: "count"},
		},
		DefaultSampleType: "time",
		PeriodType:        &profile.ValueType{Type: "calls", Unit: "count"},
		Period:            1,
		Comments:          []string{"diskio system calls"},
	}
	p.DurationNanos = s.End - s.Start
	b := newProfileBuilder(p)
	for _, c := range s.Calls {
		where := "diskio scheduler loop"
		if onCaller(c.Call) {
			where = "diskio caller"
		}
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{
				b.location(0, c.Call.String(), "", 0, nil),
				b.location(0, where, "", 0, nil),
			},
			Value: []int64{int64(c.Count), int64(c.Time), int64(c.Submitted), int64(c.Reaped)},
			Label: map[string][]string{"wait": {strconv.FormatBool(c.Wait)}},
		})
	}
	return p
}

// WriteWaitProfile writes WaitProfile in pprof's gzipped protobuf format.
func (s *Snapshot) WriteWaitProfile(w io.Writer) error { return s.WaitProfile().Write(w) }

// WriteSyscallProfile writes SyscallProfile in pprof's format.
func (s *Snapshot) WriteSyscallProfile(w io.Writer) error { return s.SyscallProfile().Write(w) }
