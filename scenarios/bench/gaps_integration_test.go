//go:build integration

package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestBenchGapsAndSharedClosing runs paced arrivals through the real stack
// (about 2 min): gaps alternating 400 ms and 2.4 s against a pooled client
// idle timeout of 1.2 s (200 ms and 1.2 s against 600 ms failed once in
// CI's four lanes: a send slower than 200 ms left the next one no gap).
// The pooled client must reuse its connection after every short gap and
// dial after every long one, the shared-closing client must dial for every
// call with one client, and both runs must reconcile with every message
// SENT once.
func TestBenchGapsAndSharedClosing(t *testing.T) {
	images, err := vendormock.ImagesFromEnv()
	if err != nil || images.Worker == "" {
		t.Fatalf("lab images: %v (LAB_IMAGE_WORKER %q)\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a (./run.sh test does both)", err, images.Worker)
	}
	const count, warmup = 12, 2
	cfg := DefaultConfig()
	cfg.Images = images // the test is the edge that reads LAB_IMAGE_* and LAB_SESSION
	cfg.Session = os.Getenv(vendormock.EnvSession)
	cfg.Count, cfg.Warmup, cfg.RTTs = count, warmup, []int{3}
	cfg.Modes = []string{vendorapi.PooledName, vendorapi.SharedClosingName}
	cfg.Arrivals = Arrivals{Kind: ArrivalsFile, Spec: "file:test", File: []time.Duration{400 * time.Millisecond, 2400 * time.Millisecond}}
	cfg.ClientIdle = 1200 * time.Millisecond
	cfg.KeepaliveTimeout = 3 * time.Second
	cfg.Out = filepath.Join(t.TempDir(), "results")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := Run(ctx, cfg, testlog.New(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rs, err := results.ReadResults(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("results = %+v; want one per mode", rs)
	}
	for _, r := range rs {
		if r.Outcomes["SENT"] != count+warmup || len(r.Outcomes) != 1 || r.JournalCount != count+warmup {
			t.Errorf("%s: outcomes %v, journal %d; want every one of %d messages SENT once", r.Mode, r.Outcomes, r.JournalCount, count+warmup)
		}
		if r.Reconcile == nil || !r.Reconcile.OK || r.Reconcile.Lost != 0 || r.Reconcile.Duplicates != 0 {
			t.Errorf("%s: reconcile = %+v; want OK, 0 lost, 0 duplicates", r.Mode, r.Reconcile)
		}
		g := r.Gaps
		if g == nil || g.Overall.N != count {
			t.Fatalf("%s: gaps %+v; want a study of %d sends", r.Mode, g, count)
		}
		for i, s := range g.Sends {
			// The arrival gap minus the previous send's time and the
			// worker's own work: above 0, below the long gap.
			if s.GapS <= 0 || s.GapS > 2.7 {
				t.Errorf("%s: send %d gap %.3f s; want (0, 2.7] s (arrival gaps of 0.4 and 2.4 s)", r.Mode, i, s.GapS)
			}
		}
	}
	byMode := map[string]results.Result{rs[0].Mode: rs[0], rs[1].Mode: rs[1]}
	po, sc := byMode[vendorapi.PooledName], byMode[vendorapi.SharedClosingName]
	for _, s := range po.Gaps.Sends {
		if short := s.GapS < 1.2; s.Reused != short {
			t.Errorf("pooled: gap %.3f s reused %v; want reuse exactly below the 1.2 s idle timeout", s.GapS, s.Reused)
		}
	}
	// The reuse split is the mechanism and must hold; whether the overall
	// median falls between the reused and new medians is a timing claim
	// that CI's four loaded lanes can blur (at c8c169d a loaded run's new
	// connections were no slower than its reused ones), so it is logged
	// here and shown by the committed run in results/gaps.
	sh := po.Gaps.Shape()
	if !sh.ReuseFalls {
		t.Errorf("pooled shape %+v; want the reuse share to fall at the idle timeout", sh)
	}
	t.Logf("pooled: median between reused and new medians: %v (p50 %.1f, reused %.1f, new %.1f ms)", sh.MedianBetween, po.Gaps.Overall.P50MS, po.Gaps.Overall.P50ReusedMS, po.Gaps.Overall.P50NewMS)
	if sc.ClientReused != 0 || sc.TCPConnections != count+warmup {
		t.Errorf("shared-closing: %d reused, %d TCP connections; want 0 and one per send (%d)", sc.ClientReused, sc.TCPConnections, count+warmup)
	}
	for _, f := range []string{"summary.md", "charts/" + report.GapChartFile(po.Mode, po.RTTMS)} {
		if _, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil {
			t.Errorf("report file: %v", err)
		}
	}
}
