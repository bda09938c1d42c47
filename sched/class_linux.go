//go:build linux

package sched

import (
	"strconv"
	"sync/atomic"
)

// The class of each descriptor (SetClass), read by callers when they hand
// a request over: two levels of atomics, so that reading allocates
// nothing and takes no lock, and a table for a million descriptors costs
// only the chunks that hold a classified one.
const (
	classChunkBits = 12
	classChunk     = 1 << classChunkBits
	classChunks    = 256 // descriptors up to 2^20
)

type classTable struct {
	used   atomic.Bool // SetClass was called: callers look classes up
	chunks [classChunks]atomic.Pointer[[classChunk]atomic.Uint32]
}

// of returns fd's class.
func (t *classTable) of(fd int32) Class {
	if !t.used.Load() || fd < 0 || int(fd) >= classChunk*classChunks {
		return Unclassified
	}
	ch := t.chunks[fd>>classChunkBits].Load()
	if ch == nil {
		return Unclassified
	}
	return Class(ch[fd&(classChunk-1)].Load())
}

func (t *classTable) set(fd int, c Class) bool {
	if fd < 0 || fd >= classChunk*classChunks {
		return false
	}
	slot := &t.chunks[fd>>classChunkBits]
	ch := slot.Load()
	if ch == nil {
		if c == Unclassified {
			return true
		}
		slot.CompareAndSwap(nil, new([classChunk]atomic.Uint32))
		ch = slot.Load()
	}
	ch[fd&(classChunk-1)].Store(uint32(c))
	if c != Unclassified {
		t.used.Store(true)
	}
	return true
}

// SetClass makes c the class of the requests on fd that are not given one
// per call (ReadAtClass, Batch.SetClass). It returns an error for a class
// it does not know, or an fd beyond 2^20. Set it back to Unclassified
// before fd is closed: the number may be reused by another file. The
// change applies to requests handed over after it returns.
func (s *Scheduler) SetClass(fd int, c Class) error {
	if c >= NumClasses {
		return errBadClass(c)
	}
	if !s.classes.set(fd, c) {
		return errClassFd(fd)
	}
	return nil
}

// ClassOf returns the class SetClass gave fd (Unclassified if none).
func (s *Scheduler) ClassOf(fd int) Class { return s.classes.of(int32(fd)) }

type errBadClass Class

func (e errBadClass) Error() string {
	return "sched: unknown class " + strconv.Itoa(int(e))
}

type errClassFd int

func (e errClassFd) Error() string {
	return "sched: SetClass: descriptor " + strconv.Itoa(int(e)) + " out of range (0 to 2^20-1)"
}

// ReadAtClass is ReadAt with the request's class given, whatever fd's.
func (s *Scheduler) ReadAtClass(fd int, p []byte, off int64, c Class) (int, error) {
	r := getRequest()
	r.op, r.fd, r.buf, r.off = OpRead, int32(fd), p, off
	r.class, r.classGiven = c%NumClasses, true
	return s.do(r)
}

// WriteAtClass is WriteAtFlags with the request's class given, whatever
// fd's.
func (s *Scheduler) WriteAtClass(fd int, p []byte, off int64, flags uint32, c Class) (int, error) {
	r := getRequest()
	r.op, r.fd, r.buf, r.off, r.rwf = OpWrite, int32(fd), p, off, flags
	r.class, r.classGiven = c%NumClasses, true
	return s.do(r)
}

// SyncClass is Fdatasync (or, with full, Fsync) with the request's class
// given, whatever fd's.
func (s *Scheduler) SyncClass(fd int, full bool, c Class) error {
	r := getRequest()
	r.op, r.fd = OpFdatasync, int32(fd)
	if full {
		r.op = OpFsync
	}
	r.class, r.classGiven = c%NumClasses, true
	_, err := s.do(r)
	return err
}

// SetClass gives the reads the batch starts from now on class c, whatever
// their descriptors'.
func (b *Batch) SetClass(c Class) { b.class, b.classGiven = c%NumClasses, true }
