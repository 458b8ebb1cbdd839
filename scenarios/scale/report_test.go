package scale

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// fixturePoints are a small grid (1 and 4 workers, the bare client) at
// concurrency 8 and a memory run, as a run writes them.
func fixturePoints() []Point {
	env := results.Environment{CPUs: 2}
	sent := func(n int) map[outcome.Outcome]int { return map[outcome.Outcome]int{outcome.Sent: n} }
	cpu := func(worker, rabbit float64) []ContainerCPU {
		return []ContainerCPU{{Name: "w-1", Role: RoleWorker, Cores: worker}, {Name: "rabbitmq", Role: "rabbitmq", Cores: rabbit}}
	}
	return []Point{
		{Name: "grid-worker-w4-c8-150ms", Series: SeriesGrid, Driver: results.DriverWorker, Workers: 4, Concurrency: 8, ServerDelayMS: 150, RTTMS: 10, HTTPVersion: "2",
			Count: 100, Warmup: 10, SendsPerS: 190, CPUMSPerSend: 0.5, Outcomes: sent(110), Containers: cpu(0.4, 0.3), Bottleneck: "none: the think time", Environment: env},
		{Name: "grid-worker-w1-c8-150ms", Series: SeriesGrid, Driver: results.DriverWorker, Workers: 1, Concurrency: 8, ServerDelayMS: 150, RTTMS: 10, HTTPVersion: "2",
			Count: 100, Warmup: 10, SendsPerS: 50, CPUMSPerSend: 0.6, Outcomes: sent(110), Containers: cpu(0.1, 0.1), Bottleneck: "none: the think time", Environment: env,
			RSS: &RSS{MaxMB: 15, EarlyMB: 14, LateMB: 14.5, DurationS: 60}},
		{Name: "grid-direct-w1-c8-150ms", Series: SeriesGrid, Driver: results.DriverDirect, Workers: 1, Concurrency: 8, ServerDelayMS: 150, RTTMS: 10, HTTPVersion: "2",
			Count: 100, Warmup: 10, SendsPerS: 51, CPUMSPerSend: 0.3, Lost: -1, Duplicates: -1, Outcomes: sent(100), Containers: cpu(0.05, 0), Environment: env},
		{Name: "soak-worker-w1-c128-150ms", Series: SeriesSoak, Driver: results.DriverWorker, Workers: 1, Concurrency: 128, ServerDelayMS: 150, RTTMS: 10, HTTPVersion: "2",
			Count: 1000, Warmup: 10, SendsPerS: 700, Outcomes: sent(1010), Environment: env, RSS: &RSS{MaxMB: 30, EarlyMB: 29, LateMB: 29.5, DurationS: 310}},
	}
}

// TestReportRendersAndRerenders: the summary holds one row per point in
// plan order, the scaling ratio and the worker/client cost ratio, the
// memory run's verdict and both charts; Report rebuilds the same summary
// from the point files alone.
func TestReportRendersAndRerenders(t *testing.T) {
	dir := t.TempDir()
	for _, p := range fixturePoints() {
		if err := WritePoint(dir, p); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := Report(dir, &out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	if s != out.String() {
		t.Error("the printed summary differs from summary.md")
	}
	for _, want := range []string{
		"| grid | direct | 1 | 8 | 150 | 100 | 51.0 |",
		"4 workers send 3.80x one worker's sends/s (190.0 vs 50.0)",
		"one worker spends 2.00x the bare client's CPU per send (0.600 vs 0.300 ms)",
		"Memory run soak-worker-w1-c128-150ms (concurrency 128, 310 s sampled): max 30.0 MB",
		": ok (flat within 5% and under 64 MB",
		"charts/" + SendsChart, "charts/" + CPUChart,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	direct, w1, w4 := strings.Index(s, "| grid | direct |"), strings.Index(s, "| grid | worker | 1 |"), strings.Index(s, "| grid | worker | 4 |")
	if direct < 0 || direct > w1 || w1 > w4 {
		t.Errorf("rows out of plan order: direct %d, w1 %d, w4 %d", direct, w1, w4)
	}
	for _, c := range []string{SendsChart, CPUChart} {
		b, err := os.ReadFile(filepath.Join(dir, ChartsDir, c))
		if err != nil || !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("chart %s: %v", c, err)
		}
	}
	if err := Report(t.TempDir(), &out); err == nil || !strings.Contains(err.Error(), "no point-*.json") {
		t.Errorf("Report of an empty folder: %v", err)
	}
}

// TestSummaryBottleneckFromFigures: the summary names a point's
// bottleneck from its stored CPU figures with today's rules, not the
// label the point file was written with (an older run's "none" for a host
// 92% busy becomes the machine's); a point without figures keeps its label.
func TestSummaryBottleneckFromFigures(t *testing.T) {
	ps := fixturePoints()[:1]
	ps[0].Containers = []ContainerCPU{{Name: "wiremock", Role: "wiremock", Cores: 0.9}, {Name: "w-1", Role: RoleWorker, Cores: 0.78}}
	ps[0].HostBusyCores = 1.835
	if s := Summary(ps); !strings.Contains(s, "machine CPU (92% of 2 cores busy; largest container: wiremock)") || strings.Contains(s, "none: the think time") {
		t.Errorf("summary row:\n%s\nwant the machine's CPU named from the figures", s)
	}
	ps[0].Containers, ps[0].Bottleneck = nil, "stored label"
	if s := Summary(ps); !strings.Contains(s, "stored label") {
		t.Errorf("a point without CPU figures: summary lacks its stored label:\n%s", s)
	}
}

// TestScalingSectionOnlyWithSomethingToCompare: a run with one worker
// count and no bare client (a memory run alone) has no ratio to give, and
// its summary has no empty "Scaling" heading; the fixture's grid has both.
func TestScalingSectionOnlyWithSomethingToCompare(t *testing.T) {
	ps := fixturePoints()
	if got := scalingSection(ps); !strings.Contains(got, "## Scaling and the worker's cost") || !strings.Contains(got, "4 workers send 3.80x") {
		t.Errorf("grid with 1 and 4 workers and the bare client: section %q; want the heading and the ratio", got)
	}
	if got := scalingSection(ps[3:]); got != "" {
		t.Errorf("memory run alone: section %q; want none", got)
	}
}

// TestSummaryNamesTheWorkersLedger: a run whose worker points used the
// case's bbolt ledger says so in the summary's header; the default run
// names the shared PostgreSQL ledger.
func TestSummaryNamesTheWorkersLedger(t *testing.T) {
	ps := fixturePoints()
	if s := Summary(ps); !strings.Contains(s, "competing consumers on the shared PostgreSQL ledger") {
		t.Errorf("default run's summary does not name the PostgreSQL ledger:\n%s", s[:min(len(s), 600)])
	}
	for i := range ps {
		if ps[i].Driver == results.DriverWorker {
			ps[i].Ledger = "bbolt"
		}
	}
	s := Summary(ps)
	if !strings.Contains(s, "own bbolt ledger") || strings.Contains(s, "shared PostgreSQL ledger") {
		t.Errorf("bbolt run's summary does not name its ledger:\n%s", s[:min(len(s), 600)])
	}
}

// TestReportOneConcurrencyOne: a run at CONCURRENCY=1 alone (the case's
// worker beside the bare client) draws its charts; the log axis used to
// panic on a range padded down to 0.
func TestReportOneConcurrencyOne(t *testing.T) {
	dir := t.TempDir()
	for _, p := range fixturePoints()[1:3] {
		p.Concurrency = 1
		p.Name = strings.Replace(p.Name, "-c8-", "-c1-", 1)
		if err := WritePoint(dir, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := Report(dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, ChartsDir, SendsChart))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Fatalf("sends chart: %v, %d bytes", err, len(svg))
	}
}

// A scale run into a folder an earlier one used: Report summarizes the
// newest run's points only and names the others (a fresh-user trial mixed
// results/scale-memory's soak point into results/scale's summary).
func TestReportNeverMixesTwoRuns(t *testing.T) {
	dir := t.TempDir()
	old := &results.Provenance{RunID: "20261201T100000Z-aaaaaaa", Date: "2026-12-01T10:00:00Z"}
	cur := &results.Provenance{RunID: "20261202T100000Z-bbbbbbb", Date: "2026-12-02T10:00:00Z"}
	ps := fixturePoints()
	for i := range ps {
		ps[i].Provenance = cur
		if ps[i].Series == SeriesSoak {
			ps[i].Provenance = old
		}
		if err := WritePoint(dir, ps[i]); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := Report(dir, &out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "soak-worker-w1-c128-150ms") {
		t.Errorf("the summary shows the older run's soak point:\n%s", md)
	}
	if !strings.Contains(out.String(), "left out 1 point file(s)") || !strings.Contains(out.String(), PointFile("soak-worker-w1-c128-150ms")) {
		t.Errorf("Report did not name the point it left out: %q", out.String())
	}
}
