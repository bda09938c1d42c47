//go:build linux

package diskioprom

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	"github.com/diskio-go/diskio"
	"github.com/diskio-go/diskio/internal/bench"
	"github.com/diskio-go/diskio/internal/testenv"
	"github.com/diskio-go/diskio/sched"
)

// promServer is a Prometheus server the test started.
type promServer struct {
	url string
}

// startPrometheus starts Debian's prometheus binary scraping target
// every scrape and evaluating the module's rules file every eval, with
// its data in a temporary directory; it is killed at cleanup.
func startPrometheus(t *testing.T, target string, scrape, eval time.Duration) *promServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		testenv.Unavailable(t, "prometheus", fmt.Errorf("no prometheus binary in PATH (apt-get install prometheus): %w", err))
	}
	rules, err := filepath.Abs("rules/diskio.rules.yml")
	require.NoError(t, err)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: %s
  evaluation_interval: %s
rule_files: [%q]
scrape_configs:
  - job_name: diskio
    static_configs:
      - targets: [%q]
`, scrape, eval, rules, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	addr := freeAddr(t)
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	p := &promServer{url: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 30s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// get calls the HTTP API and decodes its data into v.
func (p *promServer) get(t *testing.T, path string, q url.Values, v any) {
	t.Helper()
	resp, err := http.Get(p.url + path + "?" + q.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	var r struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	require.Equal(t, "success", r.Status, "%s %v: %s", path, q, r.Error)
	require.NoError(t, json.Unmarshal(r.Data, v))
}

// query evaluates an instant query and returns each series' value by
// the value of label key.
func (p *promServer) query(t *testing.T, expr, key string) map[string]float64 {
	t.Helper()
	var d struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	p.get(t, "/api/v1/query", url.Values{"query": {expr}}, &d)
	m := map[string]float64{}
	for _, r := range d.Result {
		v, err := strconv.ParseFloat(r.Value[1].(string), 64)
		require.NoError(t, err)
		m[r.Metric[key]] = v
	}
	return m
}

// firing returns the alerts firing now, by name.
func (p *promServer) firing(t *testing.T) map[string]bool {
	t.Helper()
	var d struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	p.get(t, "/api/v1/alerts", nil, &d)
	m := map[string]bool{}
	for _, a := range d.Alerts {
		if a.State == "firing" {
			m[a.Labels["alertname"]] = true
		}
	}
	return m
}

// waitFor polls cond every 50ms until it holds, for at most limit, and
// returns how long it took.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// A real Prometheus server scrapes this process while it reads and writes
// through diskio: the series exist, the counters are what the workload
// did, and a stall injected into the scheduler shows as the stall series
// and fires DiskioDiskStalled within 1.5x its threshold plus one scrape
// interval; a file reported to run buffered fires DiskioFallback.
func TestRealPrometheus(t *testing.T) {
	const (
		scrape   = time.Second
		eval     = 250 * time.Millisecond
		stallN   = 2 * time.Second // the rule's N (DiskioDiskStalled)
		stuckFor = 8 * time.Second
		blocks   = 256
		reads    = 2000
	)
	var stallArmed atomic.Bool
	const stallOff = 7 * blockSize
	s := newSched(t, sched.Options{
		SlowThreshold: time.Second,
		Faults: sched.FaultFunc(func(a sched.Attempt) sched.Fault {
			if a.Op == sched.OpRead && a.Off == stallOff && stallArmed.Load() {
				return sched.Fault{Delay: stuckFor}
			}
			return sched.Fault{}
		}),
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(New(s, Options{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })

	p := startPrometheus(t, ln.Addr().String(), scrape, eval)

	// The workload: a file written in 4 KiB blocks and synced, then
	// random 4 KiB reads, all O_DIRECT through the scheduler.
	f, err := diskio.OpenFile(filepath.Join(t.TempDir(), "data"), os.O_RDWR|os.O_CREATE, 0o600,
		diskio.WithScheduler(s), diskio.WithDirect(diskio.DirectRequired))
	if err != nil {
		testenv.Unavailable(t, "odirect", err)
	}
	defer f.Close()
	buf := make([]byte, blockSize)
	for i := range blocks {
		buf[0] = byte(i)
		_, err := f.WriteAt(buf, int64(i)*blockSize)
		require.NoError(t, err)
	}
	require.NoError(t, f.Sync())
	rng := bench.NewRand(1)
	for range reads {
		_, err := f.ReadAt(buf, rng.Offset(blocks*blockSize, blockSize))
		require.NoError(t, err)
	}
	var st sched.Stats
	s.ReadStats(&st)
	wantReads, wantWrites := st.Total(sched.OpRead), st.Total(sched.OpWrite)
	require.EqualValues(t, reads, wantReads.Requests(), "the scheduler's own count")
	require.EqualValues(t, blocks, wantWrites.Requests())

	// The series exist and the counters match the workload.
	waitFor(t, 10*time.Second, "the workload's reads in Prometheus", func() bool {
		return p.query(t, `sum by (op) (diskio_requests_total)`, "op")["read"] == reads
	})
	byOp := p.query(t, `sum by (op) (diskio_requests_total)`, "op")
	require.EqualValues(t, blocks, byOp["write"])
	require.EqualValues(t, 1, byOp["fsync"])
	bytesByOp := p.query(t, `sum by (op) (diskio_bytes_total)`, "op")
	require.EqualValues(t, reads*blockSize, bytesByOp["read"])
	require.EqualValues(t, blocks*blockSize, bytesByOp["write"])
	count := p.query(t, `sum by (op) (diskio_device_duration_seconds_count)`, "op")
	require.EqualValues(t, reads, count["read"])
	inf := p.query(t, `sum by (op) (diskio_device_duration_seconds_bucket{le="+Inf"})`, "op")
	require.EqualValues(t, reads, inf["read"])
	for _, name := range []string{"diskio_scheduler_info", "diskio_in_flight_requests", "diskio_queued_requests",
		"diskio_stalled_requests", "diskio_oldest_stall_age_seconds", "diskio_slow_requests_total",
		"diskio_fallbacks_total", "diskio_caller_places_in_use", "diskio_iouring_workers", "diskio_os_threads",
		"diskio_queue_duration_seconds_bucket", "diskio_kernel_enters_total"} {
		require.NotEmpty(t, p.query(t, name, "__name__"), "series %s", name)
	}
	require.Equal(t, map[string]float64{"uring": 1}, p.query(t, `diskio_scheduler_info`, "backend"))
	p99 := p.query(t, `histogram_quantile(0.99, sum by (le) (diskio_device_duration_seconds_bucket{op="read"}))`, "")[""]
	require.Greater(t, p99, 0.0)
	t.Logf("read p99 device time from Prometheus: %.0fµs", p99*1e6)

	// Every rule of the file loaded and evaluates.
	var rules struct {
		Groups []struct {
			Rules []struct {
				Name, Health, LastError string
			} `json:"rules"`
		} `json:"groups"`
	}
	waitFor(t, 5*time.Second, "rules evaluated", func() bool {
		p.get(t, "/api/v1/rules", nil, &rules)
		n := 0
		for _, g := range rules.Groups {
			for _, r := range g.Rules {
				if r.Health == "ok" {
					n++
				}
			}
		}
		return n == 5
	})
	require.Empty(t, p.firing(t), "no alert before the stall")

	// The stall: one read the device holds for stuckFor.
	stallArmed.Store(true)
	t0 := time.Now()
	done := make(chan error, 1)
	go func() {
		b := make([]byte, blockSize)
		_, err := f.ReadAt(b, stallOff)
		done <- err
	}()
	limit := stallN*3/2 + scrape
	seen := waitFor(t, limit, "diskio_stalled_requests == 1", func() bool {
		return p.query(t, `diskio_stalled_requests`, "")[""] == 1
	})
	fired := waitFor(t, limit-time.Since(t0), "DiskioDiskStalled firing", func() bool {
		return p.firing(t)["DiskioDiskStalled"]
	})
	fired = time.Since(t0)
	age := p.query(t, `diskio_oldest_stall_age_seconds`, "")[""]
	t.Logf("stall injected: stalled series after %v, DiskioDiskStalled firing after %v (N %v, limit %v), age %.2fs at firing",
		seen.Round(time.Millisecond), fired.Round(time.Millisecond), stallN, limit, age)
	require.GreaterOrEqual(t, age, stallN.Seconds())
	require.NoError(t, <-done)
	stallArmed.Store(false)
	waitFor(t, 2*scrape+time.Second, "the stall's end in Prometheus", func() bool {
		return p.query(t, `diskio_stalled_requests`, "")[""] == 0
	})
	slow := p.query(t, `diskio_slow_requests_total`, "waited_seconds")
	require.EqualValues(t, 1, slow["1"])
	require.EqualValues(t, 1, slow["2"])
	require.EqualValues(t, 1, slow["4"])
	require.EqualValues(t, 0, slow["8"])

	// A fallback.
	h, err := s.Open(0, "/data/table")
	require.NoError(t, err)
	h.ReportBuffered("test: O_DIRECT refused")
	t1 := time.Now()
	waitFor(t, 3*scrape+time.Second, "DiskioFallback firing", func() bool {
		return p.firing(t)["DiskioFallback"]
	})
	t.Logf("fallback reported: DiskioFallback firing after %v", time.Since(t1).Round(time.Millisecond))
}
