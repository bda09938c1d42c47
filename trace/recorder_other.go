//go:build !linux

package trace

import "github.com/diskio-go/diskio/sched"

// There is no scheduler to trace outside Linux (package sched). The
// Recorder's constructor and controls are here so that programs using
// them build everywhere; a Recorder here records nothing.

// Config configures a Recorder (see the Linux documentation).
type Config struct {
	Records    int
	StackEvery int
	Stacks     int
	Paused     bool
}

// Default sizes, as on Linux.
const (
	DefaultRecords = 1 << 16
	DefaultStacks  = 4096
)

// Recorder keeps the scheduler's events; on this system there are none.
type Recorder struct{}

// New returns a Recorder; on this system it records nothing.
func New(cfg Config) *Recorder { return &Recorder{} }

// Pause stops recording.
func (r *Recorder) Pause() {}

// Resume resumes recording after Pause.
func (r *Recorder) Resume() {}

// SyscallDone records nothing on this system.
func (r *Recorder) SyscallDone(ev sched.SyscallEvent) {}

// RequestDone records nothing on this system.
func (r *Recorder) RequestDone(ev sched.RequestEvent) {}
