//go:build integration

package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestBenchTLSResumption runs the bench's path on one stack with
// TLS_RESUMPTION=on at 3 ms, a few sends per mode (about a minute):
//   - per-request-resume on TLS 1.2: nginx logs every connection that
//     carried a send as resumed ($ssl_session_reused "r") and the worker's
//     trace says so for every measured send;
//   - per-request, the negative control on the same nginx: no cache on the
//     client, not one resumed;
//   - both: the round-trip model's parts are there (nginx's and
//     Toxiproxy's CPU read from the cgroup, nginx's upstream time, a probe
//     round trip of at least the RTT).
func TestBenchTLSResumption(t *testing.T) {
	images, err := vendormock.ImagesFromEnv()
	if err != nil || images.Worker == "" {
		t.Fatalf("lab images: %v (LAB_IMAGE_WORKER %q)\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a (./run.sh test does both)", err, images.Worker)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.Count, cfg.Warmup, cfg.RTTs, cfg.TLSResumption, cfg.PerRequestTLS = 12, 3, []int{3}, "on", "1.2"
	dir := t.TempDir()
	profile, err := ResolveProfile(cfg.Profile)
	if err != nil {
		t.Fatal(err)
	}
	log := testlog.New(t)
	stack := startTestStack(ctx, t, cfg.stackOptions(profile, images, filepath.Join(dir, "stack"), log))
	conn, err := amqp.Dial(stack.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	run := func(t *testing.T, mode string) results.Result {
		t.Helper()
		out := filepath.Join(dir, mode)
		if err := os.MkdirAll(filepath.Join(out, "nginx"), 0o755); err != nil {
			t.Fatal(err)
		}
		b := NewBench(PointOptions{Config: cfg, Log: log, Out: out, WorkDir: out, RunID: NewRunID(), Stack: stack, AMQP: conn})
		r, err := b.RunPoint(ctx, mode, 3)
		if err != nil {
			t.Fatalf("RunPoint: %v", err)
		}
		n := cfg.Count + cfg.Warmup
		if r.Outcomes[outcome.Sent] != n || r.TCPConnections != n {
			t.Fatalf("%s: outcomes %v over %d connections; want %d SENT, one connection each", mode, r.Outcomes, r.TCPConnections, n)
		}
		if r.NginxCPUMSPerSend <= 0 || r.ProxyCPUMSPerSend <= 0 || r.UpstreamMSMean <= 0 || r.ProbeRTTP50MS < 3 {
			t.Errorf("%s: model parts nginx CPU %v, Toxiproxy CPU %v, upstream %v ms, probe %v ms; want all measured, the probe >= 3 ms",
				mode, r.NginxCPUMSPerSend, r.ProxyCPUMSPerSend, r.UpstreamMSMean, r.ProbeRTTP50MS)
		}
		t.Logf("%s: resumed %d of %d connections (nginx), %d of %d sends (worker); nginx %.2f ms CPU/send, p50 %.1f ms",
			mode, r.TLSSessionsResumed, r.TCPConnections, r.ClientResumed, r.Measured, r.NginxCPUMSPerSend, r.LatencyMS.P50)
		return r
	}
	t.Run("resume", func(t *testing.T) {
		r := run(t, vendorapi.PerRequestResumeName)
		if r.TLSSessionsResumed != r.TCPConnections || r.ClientResumed != r.Measured || r.TLSResumption != "on" {
			t.Errorf("resumed %d of %d connections (nginx), %d of %d sends (worker), tls_resumption %q; want all, on",
				r.TLSSessionsResumed, r.TCPConnections, r.ClientResumed, r.Measured, r.TLSResumption)
		}
	})
	t.Run("per-request control", func(t *testing.T) {
		r := run(t, vendorapi.PerRequestName)
		if r.TLSSessionsResumed != 0 || r.ClientResumed != 0 {
			t.Errorf("per-request resumed %d connections (nginx), %d sends (worker); want none: it keeps no session", r.TLSSessionsResumed, r.ClientResumed)
		}
	})
}
