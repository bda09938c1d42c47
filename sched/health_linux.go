//go:build linux

package sched

import "time"

// What a monitor reads besides the counters (Stats.Places,
// Stats.Slow.Oldest): the caller slots in use and the age of the oldest stall.
// ReadStats finds them when called; nothing is recorded per request for
// them. The loop finds its oldest stall again only when a check reports
// a request slow or a request reported slow completes (scanStalls).

// SlowDoublings is the number of doublings of Options.SlowThreshold
// that Stats.Slow.Doublings counts requests at: from the threshold to
// 2^11 times it.
const SlowDoublings = 12

// PlaceStats counts the caller slots, where requests run on their callers'
// threads (see Options.NoInline and Options.IOWQMaxWorkers), each a
// thread held by a system call while in use.
type PlaceStats struct {
	// Inline slots serve the idle fast path and latency-class syncs
	// (on io_uring, syncs take only the blocking slots).
	Inline, InlineInUse int
	// Blocking slots serve, on io_uring, the work the ring would hand
	// to a worker thread.
	Blocking, BlockingInUse int
}

// scanStalls publishes the first submission of the oldest request the
// loop holds that was reported slow (stats.stallSince). It scans the
// slots (Options.Entries of them): it runs when a slow check
// reported a request, and after a batch that completed a request
// reported slow.
func (l *loop) scanStalls() {
	l.stallScan = false
	oldest := int64(0)
	for _, r := range l.slots[:l.wakeSlot] {
		if r != nil && r.slowReports > 0 && (oldest == 0 || r.tSubmit < oldest) {
			oldest = r.tSubmit
		}
	}
	for _, r := range l.retry {
		if r.slowReports > 0 && (oldest == 0 || r.tSubmit < oldest) {
			oldest = r.tSubmit
		}
	}
	if l.s.stats.stallSince.Load() != oldest {
		l.s.stats.stallSince.Store(oldest)
	}
}

// readHealth fills dst's Places and the oldest stall, allocating
// nothing: it counts the slots in use, and looks for stalls among the
// requests running in them (under each slot's lock, which their
// callers take twice per request).
func (s *Scheduler) readHealth(dst *Stats) {
	p := PlaceStats{Inline: min(maxInline, len(s.callerSlots))}
	p.Blocking = len(s.callerSlots) - p.Inline
	oldest := s.stats.stallSince.Load()
	for i := range s.callerSlots {
		pl := &s.callerSlots[i]
		if !pl.busy.Load() {
			continue
		}
		if pl.blocking {
			p.BlockingInUse++
		} else {
			p.InlineInUse++
		}
		if s.slowThreshold == 0 {
			continue
		}
		pl.mu.Lock()
		if r := pl.r; r != nil && r.slowReports > 0 && (oldest == 0 || r.tSubmit < oldest) {
			oldest = r.tSubmit
		}
		pl.mu.Unlock()
	}
	dst.Places = p
	dst.Fallbacks = s.stats.fallbacks.Load()
	dst.Slow.Oldest = 0
	if oldest != 0 {
		dst.Slow.Oldest = time.Duration(max(Now()-oldest, 0))
	}
	for i := range dst.Slow.Doublings {
		dst.Slow.Doublings[i] = s.stats.slowDoublings[i].Load()
	}
}
