// Package diskioprom exposes a diskio scheduler's statistics to
// Prometheus: a prometheus.Collector that reads the scheduler's
// always-on counters (sched.Scheduler.ReadStats) when scraped and turns
// them into constant metrics. It adds nothing to the I/O path: the
// scheduler counts every request whether or not a collector exists, and
// the collector copies its counters only at scrape time.
//
// Every metric is named diskio_*, in seconds and bytes, with counters
// ending in _total and at most three labels of few values: op (read,
// write, fsync, fdatasync, fallocate, unlink), class (unclassified,
// latency, background) and backend (uring, aio, blocking). The README
// lists them with the question each answers, the recommended alert rules
// (rules/diskio.rules.yml) and a Grafana dashboard
// (dashboards/diskio.json).
//
// To expose the process-wide scheduler's metrics:
//
//	s, _ := sched.Default()
//	prometheus.MustRegister(diskioprom.New(s, diskioprom.Options{}))
//	http.Handle("/metrics", promhttp.Handler())
//
// Where no scheduler runs (another system than Linux, or a nil
// Scheduler) the collector collects nothing.
package diskioprom
