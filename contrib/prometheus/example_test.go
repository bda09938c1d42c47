package diskioprom_test

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	diskioprom "github.com/diskio-go/diskio/contrib/prometheus"
	"github.com/diskio-go/diskio/sched"
)

// The process-wide scheduler's metrics on the default registry, served
// with the rest at /metrics (the root README's example).
func Example() {
	s, _ := sched.Default()
	prometheus.MustRegister(diskioprom.New(s, diskioprom.Options{}))
	http.Handle("/metrics", promhttp.Handler())
}
