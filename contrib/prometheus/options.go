package diskioprom

import "github.com/prometheus/client_golang/prometheus"

// Options configure a Collector. The zero value is the default.
type Options struct {
	// ConstLabels are added to every metric, to tell several schedulers
	// of one process apart (for example {"scheduler": "wal"}).
	ConstLabels prometheus.Labels
	// NoProcess leaves out the process-wide gauges (diskio_os_threads,
	// diskio_iouring_workers), for every collector of a process but
	// one when it runs several schedulers.
	NoProcess bool
}
