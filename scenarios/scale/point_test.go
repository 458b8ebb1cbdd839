package scale

import (
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// series builds a Series: nginx sampled over 0..10 s using 0.5 core, a
// worker from 2 to 8 s using a full core with RSS rss(i) MB at second i.
func testSeries(rss func(i int) float64) Series {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	s := Series{Names: map[string]string{"ng": "nginx", "w": "pooled-10ms-worker-1"}, Samples: map[string][]Sample{}}
	for i := 0; i <= 10; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		s.Samples["ng"] = append(s.Samples["ng"], Sample{At: at, CPUNanos: int64(i) * 5e8})
		if i >= 2 && i <= 8 {
			s.Samples["w"] = append(s.Samples["w"], Sample{At: at, CPUNanos: int64(i-2) * 1e9, RSSBytes: int64(rss(i) * (1 << 20))})
		}
	}
	return s
}

// TestSeriesWindowCPUAndBottleneck: the window is when a worker ran,
// each container's cores over it, and a worker at its one CPU is named
// the bottleneck.
func TestSeriesWindowCPUAndBottleneck(t *testing.T) {
	s := testSeries(func(int) float64 { return 20 })
	from, to, ok := s.Window()
	if !ok || to.Sub(from) != 6*time.Second {
		t.Fatalf("window %s..%s (%t), want the worker's 6 s", from, to, ok)
	}
	cs := s.CPU(from, to)
	if len(cs) != 2 || cs[0].Name != "pooled-10ms-worker-1" || cs[0].Cores != 1 || cs[1].Cores != 0.5 || cs[1].CPUS != 3 {
		t.Fatalf("CPU = %+v, want the worker at 1 core, nginx at 0.5 (3 s CPU)", cs)
	}
	if got := Bottleneck(cs, 2, 1.5); !strings.HasPrefix(got, "worker CPU") {
		t.Errorf("Bottleneck = %q, want the worker's CPU", got)
	}
	// Negative controls: a worker at half a core on an idle machine is
	// no bottleneck; busy services on a small machine are the machine's.
	half := []ContainerCPU{{Name: "w", Role: RoleWorker, Cores: 0.5}, {Name: "rabbitmq", Role: "rabbitmq", Cores: 0.3}}
	if got := Bottleneck(half, 2, 0.9); got != "none: the think time" {
		t.Errorf("Bottleneck(idle) = %q", got)
	}
	// The same containers on a host kept busy by others: the machine.
	if got := Bottleneck(half, 2, 1.9); !strings.HasPrefix(got, "machine CPU (95% of 2 cores busy, 55% outside the stack's containers; largest container: w") {
		t.Errorf("Bottleneck(busy host) = %q, want the machine's, most of it outside the stack", got)
	}
	busy := []ContainerCPU{{Name: "rabbitmq", Role: "rabbitmq", Cores: 0.9}, {Name: "w", Role: RoleWorker, Cores: 0.6}, {Name: "postgres", Role: "postgres", Cores: 0.3}}
	if got := Bottleneck(busy, 2, 1.85); !strings.HasPrefix(got, "machine CPU (90% of 2 cores; largest: rabbitmq") {
		t.Errorf("Bottleneck(busy) = %q, want the machine's, rabbitmq largest", got)
	}
	// The host busy at 92% of its cores, the containers' own share at 84%
	// (scale's first committed run, 2 workers at 128: p50 430 ms against
	// 165 ms): the machine, not the think time. Failed before: "none".
	near := []ContainerCPU{{Name: "wiremock", Role: "wiremock", Cores: 0.474}, {Name: "postgres", Role: "postgres", Cores: 0.322},
		{Name: "w1", Role: RoleWorker, Cores: 0.195}, {Name: "w2", Role: RoleWorker, Cores: 0.193}, {Name: "toxiproxy", Role: "toxiproxy", Cores: 0.175},
		{Name: "rabbitmq", Role: "rabbitmq", Cores: 0.2}, {Name: "nginx", Role: "nginx", Cores: 0.128}}
	if got := Bottleneck(near, 2, 1.835); !strings.HasPrefix(got, "machine CPU (92% of 2 cores busy; largest container: wiremock") {
		t.Errorf("Bottleneck(host busy, containers just under) = %q, want the machine's", got)
	}
	if _, _, ok := (Series{Names: map[string]string{"ng": "nginx"}, Samples: map[string][]Sample{"ng": s.Samples["ng"]}}).Window(); ok {
		t.Error("a window without any worker sample")
	}
}

// TestRSSCheck: a flat RSS under the limit over five minutes passes; a
// growing one (the leak the check exists for), one above 64 MB and one
// sampled too briefly fail.
func TestRSSCheck(t *testing.T) {
	flat := make([]float64, 301)
	grow := make([]float64, 301)
	for i := range flat {
		flat[i] = 18 + float64(i%3)*0.1
		grow[i] = 18 + float64(i)*0.02 // +6 MB over the run
	}
	ok := summarizeRSS(flat, 300*time.Second, time.Second)
	if c := ok.Check(); c != "ok" {
		t.Errorf("flat 18 MB: %s (%+v)", c, ok)
	}
	if ok.MaxMB != 18.2 || ok.TrendMBPerMin > 0.05 || ok.TrendMBPerMin < -0.05 {
		t.Errorf("flat: max %.2f, trend %.3f MB/min", ok.MaxMB, ok.TrendMBPerMin)
	}
	leak := summarizeRSS(grow, 300*time.Second, time.Second)
	if leak.Flat() || !strings.Contains(leak.Check(), "grew") {
		t.Errorf("growing RSS passed: %+v", leak)
	}
	if d := leak.TrendMBPerMin - 1.2; d > 0.01 || d < -0.01 {
		t.Errorf("trend %.3f MB/min, want 1.2", leak.TrendMBPerMin)
	}
	big := summarizeRSS([]float64{70, 70, 70, 70, 70, 70}, 300*time.Second, time.Minute)
	if !strings.Contains(big.Check(), "max 70.0 MB") {
		t.Errorf("70 MB: %s", big.Check())
	}
	short := summarizeRSS(flat[:60], 59*time.Second, time.Second)
	if !strings.Contains(short.Check(), "sampled 59 s") {
		t.Errorf("59 s: %s", short.Check())
	}
	s := testSeries(func(i int) float64 { return float64(10 + i) })
	from, to, _ := s.Window()
	r := s.RSS(from, to, time.Second)
	if r == nil || r.MaxMB != 18 || r.DurationS != 6 || len(r.Samples) != 7 {
		t.Errorf("Series.RSS = %+v, want 7 samples up to 18 MB over 6 s", r)
	}
}

// TestPointCheck: a worker point passes with every message SENT and
// nothing lost or duplicated; the direct driver counts measured sends
// only and has no reconciler.
func TestPointCheck(t *testing.T) {
	p := Point{Driver: results.DriverWorker, Count: 10, Warmup: 2, Lost: -1, Duplicates: -1, Outcomes: map[outcome.Outcome]int{outcome.Sent: 12}}
	if got := p.Check(); got != "CHECK: not reconciled" {
		t.Errorf("unreconciled: %q", got)
	}
	p.Lost, p.Duplicates = 0, 1
	if got := p.Check(); !strings.Contains(got, "1 duplicates") {
		t.Errorf("a duplicate: %q", got)
	}
	p.Duplicates = 0
	if got := p.Check(); got != "ok" {
		t.Errorf("clean: %q", got)
	}
	d := Point{Driver: results.DriverDirect, Count: 10, Warmup: 2, Lost: -1, Duplicates: -1, Outcomes: map[outcome.Outcome]int{outcome.Sent: 10}}
	if got := d.Check(); got != "ok" {
		t.Errorf("direct: %q", got)
	}
	d.Outcomes[outcome.Sent] = 9
	if got := d.Check(); got != "CHECK: SENT 9 of 10" {
		t.Errorf("direct short: %q", got)
	}
}
