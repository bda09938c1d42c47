//go:build linux

package pebblevfs

import (
	"strconv"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/diskio-go/diskio/sched"
)

// DiskSlow returns a sched.Options.OnSlow that turns the scheduler's
// slow-request reports into Pebble's disk-slow events: give it the
// database's EventListener.DiskSlow, and the scheduler the files of this
// FS use (diskio.WithScheduler), and the engine is told of a stalling
// disk without vfs.WithDiskHealthChecks' timers around every call. The
// scheduler reports a request once it has been in the kernel longer than
// sched.Options.SlowThreshold, and again each time its wait doubles;
// reads are reported too, with OpTypeUnknown (Pebble's OpType has no
// read).
//
//	el := pebble.MakeLoggingEventListener(nil)
//	s, err := sched.New(sched.Options{SlowThreshold: time.Second, OnSlow: pebblevfs.DiskSlow(el.DiskSlow)})
//	...
//	opts := &pebble.Options{FS: pebblevfs.New(diskio.WithScheduler(s)), EventListener: &el}
func DiskSlow(fn func(vfs.DiskSlowInfo)) func(sched.SlowIO) {
	return func(ev sched.SlowIO) {
		info := vfs.DiskSlowInfo{Path: ev.Name, Duration: ev.Waited}
		if info.Path == "" {
			info.Path = "fd " + strconv.Itoa(int(ev.Fd))
		}
		switch ev.Op {
		case sched.OpWrite:
			info.OpType, info.WriteSize = vfs.OpTypeWrite, ev.Len
		case sched.OpFsync:
			info.OpType = vfs.OpTypeSync
		case sched.OpFdatasync:
			info.OpType = vfs.OpTypeSyncData
		case sched.OpFallocate:
			info.OpType = vfs.OpTypePreallocate
		}
		fn(info)
	}
}
