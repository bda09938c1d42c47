//go:build linux

package sched

import "github.com/diskio-go/diskio/internal/schedlink"

// linked is a Scheduler seen through schedlink.Scheduler: the calls only
// package diskio makes, which sched does not export.
type linked Scheduler

func init() {
	schedlink.Of = func(s any) schedlink.Scheduler { return (*linked)(s.(*Scheduler)) }
	schedlink.SetRingFlags = func(opts any, flags uint32) { opts.(*Options).ringFlags = flags }
	schedlink.SetDefaultTracer = func(t any) bool {
		tr, _ := t.(Tracer)
		return setDefaultTracer(tr)
	}
}

func (l *linked) ReadAtNowait(fd int, p []byte, off int64, expectHit bool) (int, error) {
	return (*Scheduler)(l).readAtNowait(fd, p, off, expectHit)
}

func (l *linked) WriteAtNowait(fd int, p []byte, off int64, rwf uint32) (int, error) {
	return (*Scheduler)(l).writeAtNowait(fd, p, off, rwf)
}

func (l *linked) WriteAtInline(fd int, p []byte, off int64, rwf uint32) (int, error) {
	return (*Scheduler)(l).writeAtInline(fd, p, off, rwf)
}

func (l *linked) WriteAtFlags(fd int, p []byte, off int64, rwf uint32) (int, error) {
	return (*Scheduler)(l).writeAtFlags(fd, p, off, rwf)
}

func (l *linked) RegisterFile(fd int) error   { return (*Scheduler)(l).registerFile(fd) }
func (l *linked) UnregisterFile(fd int) error { return (*Scheduler)(l).unregisterFile(fd) }
func (l *linked) SetName(fd int, name string) { (*Scheduler)(l).setName(fd, name) }

func (l *linked) GetBuffer(n int) ([]byte, error) { return (*Scheduler)(l).getBuffer(n) }
func (l *linked) PutBuffer(b []byte)              { (*Scheduler)(l).putBuffer(b) }

func (l *linked) BufferStats() schedlink.BufferStats { return (*Scheduler)(l).bufferStats() }

func (l *linked) Learnt() *schedlink.Learnt { return &l.learnt }
