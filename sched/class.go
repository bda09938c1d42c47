package sched

// Class is the I/O class of a request: what it is waiting for decides how
// the scheduler orders it against others on the same device. A request
// takes the class given to its call (ReadAtClass, Batch.SetClass), else
// the class set for its descriptor (SetClass; diskio.WithClass sets it for
// a File), else Unclassified.
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
