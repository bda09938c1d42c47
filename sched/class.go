package sched

import "time"

// Class is the I/O class of a request: what it is waiting for decides how
// the scheduler orders it against others on the same device. A request
// takes the class given to its call (ReadAtClass, Batch.SetClass), else
// its File's (File.SetClass; diskio.WithClass sets it for a diskio.File),
// else Unclassified.
type Class uint8

const (
	// Unclassified requests are scheduled as they were before classes
	// existed: in arrival order, with the process's own I/O priority,
	// never held back and never holding anything back.
	Unclassified Class = iota
	// Latency is for requests someone is waiting on now: WAL writes and
	// syncs, foreground reads. While any is queued or in flight (and for
	// ClassOptions.Hold after the last), background requests in flight
	// are bounded, so a latency request waits behind few of them.
	Latency
	// Background is for work whose completion time matters less than
	// the device's throughput: compaction and flush I/O, prefetch,
	// scans. It gets the whole device when no latency request waits,
	// and a bounded share, adapted to measured completion times, when
	// one does.
	Background

	// NumClasses is the number of classes (the length of per-class
	// arrays in Stats).
	NumClasses = 3
)

var classNames = [...]string{"unclassified", "latency", "background"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class?"
}

// Ioprio is a kernel I/O priority (ioprio_set(2)) as a request carries
// it: a class in the top three bits of 16, a level below. The zero value
// is none: the request takes its process's priority.
type Ioprio uint16

// IoprioClass is a kernel I/O priority class (include/uapi/linux/ioprio.h).
type IoprioClass uint16

const (
	IoprioRealTime   IoprioClass = 1 // served before the others; needs CAP_SYS_ADMIN or CAP_SYS_NICE
	IoprioBestEffort IoprioClass = 2 // the kernel's default class
	IoprioIdle       IoprioClass = 3 // served when no other class waits
)

// ioprioClassShift is IOPRIO_CLASS_SHIFT: where the class starts.
const ioprioClassShift = 13

// MakeIoprio returns the priority of class at level, 0 the highest and 7
// the lowest: the kernel's IOPRIO_PRIO_VALUE(class, level).
func MakeIoprio(class IoprioClass, level uint16) Ioprio {
	return Ioprio(class)<<ioprioClassShift | Ioprio(level)
}

// ClassOptions configure how the scheduler orders classes
// (Options.Classes). The zero value is the default policy.
//
// The policy: latency-class and unclassified requests go to the kernel as
// they come. Background requests do too while no latency-class request is
// queued or in flight (and Hold has passed since the last one completed):
// then they may take every slot, and the device is kept busy. While
// latency work is about, the background requests in flight are bounded:
// a latency request reaching the device waits behind at most that many.
// The bound adapts to measured completion times, in the spirit of
// Seastar's I/O scheduler (which keeps the work dispatched to a disk to
// what it completes within a latency goal): from the device times of the
// background requests submitted under the bound (an average over the
// last few), it is scaled by Goal/average at most 2x up or down every
// max(8, bound) completions, so background requests take about Goal in
// the kernel, which is the wait they add to a latency request queued
// behind them. Background requests that wait for the bound keep their
// order; the bound never falls below MinBackground, so they always move.
type ClassOptions struct {
	// Off schedules every request as Unclassified (no bound, no
	// priority); Stats still count them by class.
	Off bool
	// Goal is the device time the bound aims at for background
	// requests while latency work waits: the delay they may add to a
	// latency request (default DefaultGoal).
	Goal time.Duration
	// Hold is how long the bound stays after the last latency request
	// completed (default DefaultHold): a writer's next commit usually
	// comes within it, and should not find the queue refilled.
	Hold time.Duration
	// MinBackground is the bound's floor (default 1).
	MinBackground int
	// Ioprio is the kernel I/O priority (MakeIoprio) each class's reads
	// and writes carry, in the io_uring SQE's ioprio or AIO's
	// aio_reqprio; 0 keeps the process's. The default, the zero array,
	// gives no class a priority of its own: every request keeps the
	// process's. (An idle background class can wait seconds behind
	// busier ones on mq-deadline; docs/notes/2026-11-28-design-figures.md.)
	// Schedulers that honour it: mq-deadline (by class only: RT before
	// BE before IDLE), bfq (classes and levels as weights); none and
	// kyber ignore it. Syncs carry none: the journal writes of an fsync
	// are the filesystem's.
	Ioprio [NumClasses]Ioprio
	// NoIoprio leaves every request at the process's priority.
	NoIoprio bool
}

// The defaults of ClassOptions: Goal, the device time background requests
// aim at while latency work waits, and Hold, how long the bound stays
// after the last latency request. They were chosen with
// BenchmarkCommitBesideReads (a committing writer beside cold random
// readers); the figures are in docs/notes/2026-11-25-io-classes.md and
// docs/notes/2026-11-28-design-figures.md.
const (
	DefaultGoal = 200 * time.Microsecond
	DefaultHold = 2 * time.Millisecond
)
