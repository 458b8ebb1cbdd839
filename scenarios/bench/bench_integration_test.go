//go:build integration

package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestBenchBothModes runs the lab end to end through the real stack
// (RabbitMQ, WireMock, nginx, Toxiproxy, the worker image) at a small COUNT
// and checks the physics and the bookkeeping of a bench run.
func TestBenchBothModes(t *testing.T) {
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		t.Fatalf("lab images: %v\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a (./run.sh test does both)", err)
	}
	if images.Worker == "" {
		t.Fatal("LAB_IMAGE_WORKER is empty: run vendormock/images/ensure-images.sh again once worker/cmd/notifier-worker builds, then load .lab/images.env")
	}
	const count, warmup, rtt, delay = 60, 5, 10, 18
	cfg := DefaultConfig()
	cfg.Images = images // the test is the edge that reads LAB_IMAGE_* and LAB_SESSION
	cfg.Session = os.Getenv(vendormock.EnvSession)
	cfg.Count, cfg.Warmup, cfg.RTTs, cfg.ServerDelayMS = count, warmup, []int{rtt}, delay
	cfg.Modes = []string{vendorapi.PerRequestName, vendorapi.PooledName}
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
	byMode := map[string]results.Result{}
	for _, r := range rs {
		byMode[r.Mode] = r
	}
	pr, po := byMode[vendorapi.PerRequestName], byMode[vendorapi.PooledName]
	if len(rs) != 2 || pr.Mode == "" || po.Mode == "" {
		t.Fatalf("results = %+v; want one per mode", rs)
	}
	for _, r := range rs {
		if r.Outcomes["SENT"] != count+warmup || len(r.Outcomes) != 1 {
			t.Errorf("%s: outcomes %v; want every one of %d messages SENT (errors %q)", r.Mode, r.Outcomes, count+warmup, r.Errors)
		}
		if r.JournalCount != count+warmup {
			t.Errorf("%s: journal_count %d; want %d", r.Mode, r.JournalCount, count+warmup)
		}
		if r.Measured != count {
			t.Errorf("%s: measured %d records; want %d", r.Mode, r.Measured, count)
		}
		if r.SelfCheckRTTMS < rtt {
			t.Errorf("%s: self-check RTT %.1f ms < %d ms", r.Mode, r.SelfCheckRTTMS, rtt)
		}
		if r.SendsPerS <= 0 || r.CPUMSPerSend <= 0 || r.WallS <= 0 {
			t.Errorf("%s: sends/s %.1f, CPU %.2f ms/send, wall %.1f s; want all > 0", r.Mode, r.SendsPerS, r.CPUMSPerSend, r.WallS)
		}
		if r.Reconcile == nil || !r.Reconcile.OK || r.Reconcile.Duplicates != 0 || r.Reconcile.Lost != 0 {
			t.Errorf("%s: reconcile = %+v; want OK with 0 duplicates and 0 lost", r.Mode, r.Reconcile)
		}
		if _, err := os.Stat(filepath.Join(cfg.Out, r.AccessLog)); err != nil {
			t.Errorf("%s: access log slice: %v", r.Mode, err)
		}
	}
	if pr.TCPConnections != count+warmup {
		t.Errorf("per-request tcp_connections = %d; want COUNT+WARMUP = %d (a new connection per send)", pr.TCPConnections, count+warmup)
	}
	if po.TCPConnections != 1 {
		t.Errorf("pooled tcp_connections = %d; want 1 (one keep-alive connection)", po.TCPConnections)
	}
	if pr.TLSVersions["TLSv1.2"] != count+warmup {
		t.Errorf("per-request TLS versions %v; want all TLSv1.2 (PER_REQUEST_TLS=1.2)", pr.TLSVersions)
	}
	if po.ClientReused != count {
		t.Errorf("pooled client_reused = %d; want every measured send (%d)", po.ClientReused, count)
	}
	// Physics: a pooled send waits for the vendor's delay and one round trip.
	if min := float64(delay + rtt); po.LatencyMS.P50 < min {
		t.Errorf("pooled p50 %.1f ms < SERVER_DELAY_MS + RTT = %.0f ms: the delay or the toxic is missing", po.LatencyMS.P50, min)
	}
	if pr.LatencyMS.P50 <= po.LatencyMS.P50 {
		t.Errorf("per-request p50 %.1f ms <= pooled p50 %.1f ms: a new TCP+TLS connection per send must cost more", pr.LatencyMS.P50, po.LatencyMS.P50)
	}
	for _, f := range []string{"summary.md", "charts/latency-p50.svg", "charts/tcp-connections.svg"} {
		if _, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil {
			t.Errorf("report file: %v", err)
		}
	}
}

// TestBenchMalformed mixes malformed messages among valid ones (MALFORMED,
// the malformed check at a small count): every malformed one must end INVALID in
// the dead-letter queue with a reason (the reconciler's "invalid" rule),
// every valid one SENT exactly once, and the worker must run to the end.
func TestBenchMalformed(t *testing.T) {
	images, err := vendormock.ImagesFromEnv()
	if err != nil || images.Worker == "" {
		t.Fatalf("lab images: %v (LAB_IMAGE_WORKER %q)\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a (./run.sh test does both)", err, images.Worker)
	}
	const count, warmup, malformed = 40, 2, 40
	cfg := DefaultConfig()
	cfg.Images = images // the test is the edge that reads LAB_IMAGE_* and LAB_SESSION
	cfg.Session = os.Getenv(vendormock.EnvSession)
	cfg.Count, cfg.Warmup, cfg.Malformed, cfg.RTTs = count, warmup, malformed, []int{3}
	cfg.Modes = []string{vendorapi.PooledName}
	cfg.Out = filepath.Join(t.TempDir(), "results")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	log := testlog.New(t)
	if err := Run(ctx, cfg, log); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if strings.Contains(log.String(), "WARNING") {
		t.Error("the run logged a WARNING; malformed messages dead-lettered as INVALID are expected")
	}
	rs, err := results.ReadResults(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("results = %+v; want one", rs)
	}
	r := rs[0]
	if r.Outcomes["SENT"] != count+warmup || r.Outcomes["INVALID"] != malformed || len(r.Outcomes) != 2 {
		t.Errorf("outcomes %v; want SENT %d and INVALID %d only", r.Outcomes, count+warmup, malformed)
	}
	if r.JournalCount != count+warmup {
		t.Errorf("journal_count %d; want %d (no malformed message reaches the vendor)", r.JournalCount, count+warmup)
	}
	if r.Reconcile == nil || !r.Reconcile.OK || r.Reconcile.Lost != 0 || r.Reconcile.Duplicates != 0 {
		t.Fatalf("reconcile = %+v; want OK, 0 lost, 0 duplicates", r.Reconcile)
	}
	if got := r.Reconcile.ByOutcome["INVALID"]; got != malformed {
		t.Errorf("reconcile by_outcome INVALID = %d; want %d dead-lettered with a reason", got, malformed)
	}
}
