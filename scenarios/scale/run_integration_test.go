//go:build integration

package scale

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestScaleRunSmall runs `./run.sh scale` end to end at a small size on
// the real stack: the bare client and one and two competing workers at
// concurrency 4, then a short memory run. Every worker point must be
// reconciled from nginx's access log (the scale stack's WireMock keeps
// no journal: Options.NoRequestJournal) with 0 lost and 0 duplicates,
// every point must carry its containers' CPU, and the memory run its RSS
// samples; the summary and charts must be written. With CPU_PROFILE=on
// every worker point keeps one profile per replica under its own name and
// splits it, ack and ledger parts included. Every point records nginx's
// upstream pool and the connections nginx opened to WireMock. About 2 min.
func TestScaleRunSmall(t *testing.T) {
	images, err := vendormock.ImagesFromEnv()
	if err != nil || images.Worker == "" {
		t.Fatalf("lab images: %v (LAB_IMAGE_WORKER %q)\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a (./run.sh test does both)", err, images.Worker)
	}
	cfg := DefaultConfig()
	cfg.Images = images // the test is the edge that reads LAB_IMAGE_* and LAB_SESSION
	cfg.Session = os.Getenv(vendormock.EnvSession)
	cfg.Concurrencies, cfg.WorkerCounts, cfg.CaseDelayMS = []int{4}, []int{1, 2}, CaseOff
	cfg.Warmup, cfg.PointS, cfg.SoakS = 10, 2, 20
	cfg.Out = filepath.Join(t.TempDir(), "scale")
	cfg.CPUProfile = "on"

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	log := testlog.New(t)
	if err := Run(ctx, cfg, log); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// A long point is not silent: the workers' progress comes through,
	// named by the point.
	if want := "[lab] soak-worker-w1-c4-150ms: pooled 10 ms: "; !strings.Contains(log.String(), want) || !strings.Contains(log.String(), "handled (100%)") {
		t.Errorf("the log has no progress line %q...handled (100%%)", want)
	}
	points, err := ReadPoints(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	plan := cfg.Plan()
	if len(points) != len(plan) {
		t.Fatalf("%d point files, want %d (the plan: %v)", len(points), len(plan), plan)
	}
	for _, p := range points {
		if chk := p.Check(); chk != "ok" {
			t.Errorf("%s: %s", p.Name, chk)
		}
		if p.SendsPerS <= 0 || p.LatencyMS.P50 < float64(p.ServerDelayMS) {
			t.Errorf("%s: %.1f sends/s, p50 %.1f ms; want > 0 and at least the think time (%d ms)", p.Name, p.SendsPerS, p.LatencyMS.P50, p.ServerDelayMS)
		}
		if len(p.Containers) == 0 || p.Bottleneck == "" {
			t.Errorf("%s: containers %v, bottleneck %q; want each container's CPU and a verdict", p.Name, p.Containers, p.Bottleneck)
		}
		// nginx keeps UPSTREAM_POOL's default of idle connections to
		// WireMock, and the point says how many it opened (4 in flight
		// stay well inside the pool: a few at most, never one per send).
		if p.UpstreamKeepalive != DefaultUpstreamPool || p.UpstreamOpens == nil || *p.UpstreamOpens < 0 || *p.UpstreamOpens > int64(p.Count+p.Warmup)/4 {
			t.Errorf("%s: upstream keepalive %d, opens %v (sample errors %q); want %d and a count of nginx's connects below a quarter of the sends",
				p.Name, p.UpstreamKeepalive, p.UpstreamOpens, p.SampleErrors, DefaultUpstreamPool)
		}
		if p.Driver != results.DriverWorker {
			continue
		}
		if p.Lost != 0 || p.Duplicates != 0 || p.Outcomes[outcome.Sent] != p.Count+p.Warmup {
			t.Errorf("%s: lost %d, duplicates %d, outcomes %v; want 0, 0 and all %d SENT (reconciled from nginx's log)",
				p.Name, p.Lost, p.Duplicates, p.Outcomes, p.Count+p.Warmup)
		}
		// WORKER_STATE=tmpfs (the default) reaches the scale's points: their
		// files were on disk, under a tmpfs label, before PrepareStateDir.
		if p.WorkerState != bench.StateTmpfs {
			t.Errorf("%s: worker state %q, want %q (WORKER_STATE's default)", p.Name, p.WorkerState, bench.StateTmpfs)
		}
		if s := p.CPUSplit; s == nil || len(s.Profiles) != p.Workers || s.SampledS <= 0 || s.Handled != p.Count+p.Warmup {
			t.Errorf("%s: cpu split %+v; want %d profile(s), CPU sampled, %d handled", p.Name, s, p.Workers, p.Count+p.Warmup)
		} else {
			for _, f := range s.Profiles {
				if !strings.HasPrefix(filepath.Base(f), p.Name+"-") {
					t.Errorf("%s: profile %s is not named after its point", p.Name, f)
				}
				if _, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil {
					t.Errorf("%s: profile: %v", p.Name, err)
				}
			}
		}
		if p.Series == SeriesSoak && (p.RSS == nil || p.RSS.MaxMB <= 0) {
			t.Errorf("%s: RSS %+v (sample errors %q); want the worker's memory sampled", p.Name, p.RSS, p.SampleErrors)
		}
	}
	for _, f := range []string{"summary.md", "charts"} {
		if _, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil {
			t.Errorf("report: %v", err)
		}
	}
	if md, err := os.ReadFile(filepath.Join(cfg.Out, "summary.md")); err != nil || !strings.Contains(string(md), "## Where the worker's own CPU goes") || !strings.Contains(string(md), "## Where each send's CPU goes, by container") {
		t.Errorf("summary.md lacks the CPU per send tables (%v)", err)
	}
}
