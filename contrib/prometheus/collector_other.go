//go:build !linux

package diskioprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/diskio-go/diskio/sched"
)

// Collector collects a scheduler's metrics. On this system no scheduler
// runs, and it collects nothing.
type Collector struct{}

// New returns a Collector for s; on this system it collects nothing.
func New(s *sched.Scheduler, opts Options) *Collector { return &Collector{} }

// Describe sends nothing: an unchecked collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {}

// Collect sends nothing.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {}
