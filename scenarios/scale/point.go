package scale

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// Point is the result of one point of a scale run (OUT/point-<name>.json).
type Point struct {
	Name        string `json:"name"`   // Spec.Name
	Series      string `json:"series"` // grid, case, soak
	Driver      string `json:"driver"` // direct, worker
	Workers     int    `json:"workers"`
	Concurrency int    `json:"concurrency"`
	// Repeat is the point's turn among the run's REPEATS (Spec.Repeat;
	// absent in a run of one).
	Repeat int `json:"repeat,omitempty"`
	// ServerDelayMS is the vendor's think time, RTTMS the round trip
	// Toxiproxy adds, ms.
	ServerDelayMS int    `json:"server_delay_ms"`
	RTTMS         int    `json:"rtt_ms"`
	HTTPVersion   string `json:"http_version"`
	Ledger        string `json:"ledger,omitempty"` // worker points: postgres, or bbolt (WORKERS=1)
	// WorkerState is where the worker points' ledger (bbolt) and records
	// lived while they ran: "tmpfs" or "disk" (WORKER_STATE; points
	// written before it was recorded say nothing: disk).
	WorkerState string `json:"worker_state,omitempty"`
	// Count is the measured sends (PointCount), Warmup the sends before.
	Count  int `json:"count"`
	Warmup int `json:"warmup"`
	// SendsPerS is measured sends over their wall time; LatencyMS the
	// percentiles of their send latency, ms.
	SendsPerS float64 `json:"sends_per_s"`
	WallS     float64 `json:"wall_s"`
	LatencyMS Latency `json:"latency_ms"`
	// CPUMSPerSend is the worker processes' CPU per measured send as
	// they record it, ms; ClientCPUMSPerSend the part spent inside the
	// send calls.
	CPUMSPerSend       float64                 `json:"cpu_ms_per_send"`
	ClientCPUMSPerSend float64                 `json:"client_cpu_ms_per_send"`
	Outcomes           map[outcome.Outcome]int `json:"outcomes"`
	// Lost and Duplicates are the reconciler's (worker points; -1 for
	// the direct driver, which has no broker).
	Lost       int                     `json:"lost"`
	Duplicates int                     `json:"duplicates"`
	RateLimit  *results.RateLimitCheck `json:"rate_limit,omitempty"`
	// Containers is every container's CPU over the window the workers
	// ran (WindowS s), heaviest first; Bottleneck names what saturated.
	Containers []ContainerCPU `json:"containers"`
	WindowS    float64        `json:"window_s"`
	// HostBusyCores is the whole host's busy CPU over the window, cores
	// (/proc/stat): beside the containers' sum it shows the load from
	// outside the stack (other processes on a shared machine).
	HostBusyCores float64 `json:"host_busy_cores"`
	Bottleneck    string  `json:"bottleneck"`
	// CPUSplit is where the worker processes' CPU went, from their CPU
	// profiles (worker points run with CPU_PROFILE=on; nil otherwise).
	CPUSplit *CPUSplit `json:"cpu_split,omitempty"`
	// RSS is the worker processes' resident memory over the run (the
	// largest replica at each sample).
	RSS *RSS `json:"rss,omitempty"`
	// UpstreamOpens is how many TCP connections nginx opened while the
	// point ran, warm-up included: its network namespace's ActiveOpens,
	// and nginx's only upstream is WireMock, so each one is a connection
	// its keep-alive pool (the profile's nginx.upstream_keepalive idle
	// connections) did not have. nil when it could not be read.
	UpstreamOpens *int64 `json:"upstream_opens,omitempty"`
	// UpstreamKeepalive is the idle connections to WireMock nginx kept
	// (UPSTREAM_POOL, or the profile's); 0 in points written before it
	// was recorded (the sms profile's 8).
	UpstreamKeepalive int `json:"upstream_keepalive,omitempty"`
	// SampleErrors are the sampler's first errors (cgroups unreadable...).
	SampleErrors []string            `json:"sample_errors,omitempty"`
	Environment  results.Environment `json:"environment"`
	Provenance   *results.Provenance `json:"provenance,omitempty"`
}

// Latency are percentiles of the measured sends' latency, ms.
type Latency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// ContainerCPU is one container's CPU over a point's window.
type ContainerCPU struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// CPUS is its CPU time in the window, s; Cores that over the window's
	// length (1 = one core busy all along).
	CPUS  float64 `json:"cpu_s"`
	Cores float64 `json:"cores"`
}

// RSS sums a worker's resident memory over a run. Trend is the slope
// of a least-squares line through the samples after the first fifth (the
// warm-up), MB per minute; EarlyMB and LateMB are the mean of the second
// and of the last fifth of the samples.
type RSS struct {
	MaxMB         float64   `json:"max_mb"`
	EarlyMB       float64   `json:"early_mb"`
	LateMB        float64   `json:"late_mb"`
	TrendMBPerMin float64   `json:"trend_mb_per_min"`
	DurationS     float64   `json:"duration_s"`
	Samples       []float64 `json:"samples_mb"` // one per sampler interval
	IntervalS     float64   `json:"interval_s"`
}

// Memory check of issue 17: the worker's RSS stays under RSSLimitMB and
// flat (LateMB at most RSSFlatGrowth above EarlyMB) over a run of at
// least RSSMinDuration.
const (
	RSSLimitMB     = 64
	RSSFlatGrowth  = 0.05
	RSSMinDuration = 5 * time.Minute
)

// Flat reports whether the late samples stay within RSSFlatGrowth of
// the early ones.
func (r RSS) Flat() bool { return r.LateMB <= r.EarlyMB*(1+RSSFlatGrowth) }

// Check is the memory check's verdict: "ok", or what failed.
func (r RSS) Check() string {
	var bad []string
	if r.MaxMB >= RSSLimitMB {
		bad = append(bad, fmt.Sprintf("max %.1f MB, want under %d", r.MaxMB, RSSLimitMB))
	}
	if !r.Flat() {
		bad = append(bad, fmt.Sprintf("grew from %.1f to %.1f MB (more than %.0f%%)", r.EarlyMB, r.LateMB, 100*RSSFlatGrowth))
	}
	if r.DurationS < RSSMinDuration.Seconds() {
		bad = append(bad, fmt.Sprintf("sampled %.0f s, want at least %.0f", r.DurationS, RSSMinDuration.Seconds()))
	}
	if len(bad) == 0 {
		return "ok"
	}
	return "CHECK: " + strings.Join(bad, "; ")
}

// Window is the span the point's workers ran: from the first to the last
// sample where a worker container existed. ok is false without one.
func (s Series) Window() (from, to time.Time, ok bool) {
	for id, smp := range s.Samples {
		if (Container{Name: s.Names[id]}).Role() != RoleWorker || len(smp) == 0 {
			continue
		}
		if !ok || smp[0].At.Before(from) {
			from = smp[0].At
		}
		if !ok || smp[len(smp)-1].At.After(to) {
			to = smp[len(smp)-1].At
		}
		ok = true
	}
	return from, to, ok && to.After(from)
}

// CPU returns every container's CPU between from and to (its first and
// last sample inside), heaviest first.
func (s Series) CPU(from, to time.Time) []ContainerCPU {
	span := to.Sub(from).Seconds()
	var out []ContainerCPU
	for id, smp := range s.Samples {
		in := slices.DeleteFunc(slices.Clone(smp), func(x Sample) bool { return x.At.Before(from) || x.At.After(to) })
		if len(in) < 2 || span <= 0 {
			continue
		}
		cpu := float64(in[len(in)-1].CPUNanos-in[0].CPUNanos) / 1e9
		c := Container{ID: id, Name: s.Names[id]}
		out = append(out, ContainerCPU{Name: c.Name, Role: c.Role(), CPUS: round3(cpu), Cores: round3(cpu / span)})
	}
	slices.SortFunc(out, func(a, b ContainerCPU) int {
		if a.Cores != b.Cores {
			return -cmpFloat(a.Cores, b.Cores)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// RSS sums the workers' RSS between from and to: at each sample time the
// largest worker's; nil without a worker sample.
func (s Series) RSS(from, to time.Time, interval time.Duration) *RSS {
	byTime := map[time.Time]float64{}
	for id, smp := range s.Samples {
		if (Container{Name: s.Names[id]}).Role() != RoleWorker {
			continue
		}
		for _, x := range smp {
			if x.At.Before(from) || x.At.After(to) || x.RSSBytes <= 0 {
				continue
			}
			byTime[x.At] = max(byTime[x.At], float64(x.RSSBytes)/(1<<20))
		}
	}
	if len(byTime) == 0 {
		return nil
	}
	times := make([]time.Time, 0, len(byTime))
	for t := range byTime {
		times = append(times, t)
	}
	slices.SortFunc(times, time.Time.Compare)
	mb := make([]float64, len(times))
	for i, t := range times {
		mb[i] = round3(byTime[t])
	}
	return summarizeRSS(mb, times[len(times)-1].Sub(times[0]), interval)
}

// summarizeRSS is RSS's figures from samples taken every interval over
// duration.
func summarizeRSS(mb []float64, duration, interval time.Duration) *RSS {
	r := &RSS{MaxMB: slices.Max(mb), DurationS: round3(duration.Seconds()), Samples: mb, IntervalS: interval.Seconds()}
	n := len(mb)
	fifth := n / 5
	early, late := mb[fifth:min(n, 2*fifth+1)], mb[n-max(fifth, 1):]
	r.EarlyMB, r.LateMB = round3(mean(early)), round3(mean(late))
	// Least squares over the samples after the first fifth, x in minutes.
	xs, ys := []float64{}, mb[fifth:]
	for i := range ys {
		xs = append(xs, float64(fifth+i)*interval.Minutes())
	}
	r.TrendMBPerMin = round3(slope(xs, ys))
	return r
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// slope is the least-squares slope of ys over xs, 0 below two points.
func slope(xs, ys []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	mx, my := mean(xs), mean(ys)
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	if den == 0 {
		return 0
	}
	return num / den
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Saturation thresholds of Bottleneck: a worker container busy at least
// WorkerBusy of its one CPU, the machine at least MachineBusy of its
// cores.
const (
	WorkerBusy  = 0.9
	MachineBusy = 0.85
)

// Bottleneck names what limited a point from its containers' CPU and
// the host's busy cores (hostBusy, 0 = unknown) on a machine of cores
// cores (each worker container limited to 1 CPU): "worker CPU" when a
// worker used at least WorkerBusy of its CPU; "machine CPU" when the
// containers together, or the host, were busy at least MachineBusy of the
// cores (naming the largest container, and the share outside the stack
// when the host was busier than the containers by a tenth of its cores),
// or the host alone was (the containers' own share a little under it:
// their CPU is read a second apart, the host's too); otherwise "none: the
// think time" (the sends wait on the vendor).
func Bottleneck(cs []ContainerCPU, cores int, hostBusy float64) string {
	total, top := 0.0, ""
	for _, c := range cs {
		if c.Role == RoleWorker && c.Cores >= WorkerBusy {
			return fmt.Sprintf("worker CPU (%s at %.0f%% of its 1 CPU)", c.Name, 100*c.Cores)
		}
		total += c.Cores
		if top == "" {
			top = c.Name
		}
	}
	if cores > 0 && hostBusy >= MachineBusy*float64(cores) && hostBusy > total+0.1*float64(cores) {
		return fmt.Sprintf("machine CPU (%.0f%% of %d cores busy, %.0f%% outside the stack's containers; largest container: %s)",
			100*hostBusy/float64(cores), cores, 100*(hostBusy-total)/float64(cores), top)
	}
	if cores > 0 && total >= MachineBusy*float64(cores) {
		return fmt.Sprintf("machine CPU (%.0f%% of %d cores; largest: %s)", 100*total/float64(cores), cores, top)
	}
	if cores > 0 && hostBusy >= MachineBusy*float64(cores) {
		return fmt.Sprintf("machine CPU (%.0f%% of %d cores busy; largest container: %s)", 100*hostBusy/float64(cores), cores, top)
	}
	return "none: the think time"
}

// PointFile is a point's file name in OUT.
func PointFile(name string) string { return "point-" + name + ".json" }

// WritePoint writes p as indented JSON to dir/PointFile(p.Name).
func WritePoint(dir string, p Point) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode point: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, PointFile(p.Name)), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write point: %w", err)
	}
	return nil
}

// ReadPoints reads every dir/point-*.json. Errors: none there, an
// unreadable or malformed file (named).
func ReadPoints(dir string) ([]Point, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "point-*.json"))
	if err != nil {
		return nil, fmt.Errorf("list points: %w", err)
	}
	var out []Point
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read point: %w", err)
		}
		var pt Point
		if err := json.Unmarshal(b, &pt); err != nil {
			return nil, fmt.Errorf("read point %s: %w", filepath.Base(p), err)
		}
		out = append(out, pt)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read points: no point-*.json in %s", dir)
	}
	return out, nil
}

// Check says whether every measured send was SENT and, for a worker
// point, nothing was lost or sent twice: "ok" or "CHECK: ...".
func (p Point) Check() string {
	var bad []string
	want := p.Count + p.Warmup
	if p.Driver == results.DriverDirect {
		want = p.Count
	}
	if got := p.Outcomes[outcome.Sent]; got != want {
		bad = append(bad, fmt.Sprintf("SENT %d of %d", got, want))
	}
	if p.Driver == results.DriverWorker {
		switch {
		case p.Lost < 0 || p.Duplicates < 0:
			bad = append(bad, "not reconciled")
		case p.Lost != 0 || p.Duplicates != 0:
			bad = append(bad, fmt.Sprintf("%d lost, %d duplicates", p.Lost, p.Duplicates))
		}
	}
	if len(bad) == 0 {
		return "ok"
	}
	return "CHECK: " + strings.Join(bad, "; ")
}
