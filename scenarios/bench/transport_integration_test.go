//go:build integration

package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/testlog"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestBenchTransport runs the bench's path on one stack with SCHEME=mtls
// and h2 offered (HTTP_VERSION=2), at a small COUNT:
//   - pooled at CONCURRENCY=8 over HTTP/1.1: at most 8 connections, every
//     send HTTP/1.1, reconciled with 0 lost and 0 duplicates;
//   - the same with POOL_SIZE=2 (the negative control of the cap): the pool
//     churns, more than 8 connections;
//   - pooled at CONCURRENCY=8 with HTTP_VERSION=2: one connection, every
//     send HTTP/2.0 in nginx's access log;
//   - a worker without the run's client certificate: every send NOT_SENT
//     naming the client certificate, nginx's own 421 on every line,
//     nothing in WireMock's journal.
func TestBenchTransport(t *testing.T) {
	images, err := vendormock.ImagesFromEnv()
	if err != nil || images.Worker == "" {
		t.Fatalf("lab images: %v (LAB_IMAGE_WORKER %q)\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a (./run.sh test does both)", err, images.Worker)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.Count, cfg.Warmup, cfg.RTTs, cfg.ServerDelayMS = 100, 5, []int{3}, 18
	cfg.Modes, cfg.Scheme, cfg.HTTPVersion, cfg.Concurrency = []string{vendorapi.PooledName}, "mtls", "2", 8
	dir := t.TempDir()
	profile, err := ResolveProfile(cfg.Profile)
	if err != nil {
		t.Fatal(err)
	}
	log := testlog.New(t)
	stack := startTestStack(ctx, t, cfg.stackOptions(profile, images, filepath.Join(dir, "stack"), log))
	if stack.Scheme != vendormock.SchemeMTLS || !stack.HTTP2 {
		t.Fatalf("stack scheme %s, h2 %v; want mtls with h2 offered", stack.Scheme, stack.HTTP2)
	}
	conn, err := amqp.Dial(stack.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	run := func(t *testing.T, set func(c *Config)) results.Result {
		t.Helper()
		c := cfg
		set(&c)
		out := filepath.Join(dir, t.Name())
		if err := os.MkdirAll(filepath.Join(out, "nginx"), 0o755); err != nil {
			t.Fatal(err)
		}
		b := NewBench(PointOptions{Config: c, Log: log, Out: out, WorkDir: out, RunID: NewRunID(), Stack: stack, AMQP: conn})
		r, err := b.RunPoint(ctx, vendorapi.PooledName, 3)
		if err != nil {
			t.Fatalf("RunPoint: %v", err)
		}
		if err := results.WriteResult(out, r); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d connections, protocols %v, outcomes %v, %.1f sends/s", results.ResultFile(r), r.TCPConnections, r.Protocols, r.Outcomes, r.SendsPerS)
		return r
	}
	sent := func(t *testing.T, r results.Result, n int) {
		t.Helper()
		if r.Outcomes[outcome.Sent] != n || r.JournalCount != n {
			t.Errorf("outcomes %v, journal %d; want %d SENT and in the journal (errors %q)", r.Outcomes, r.JournalCount, n, r.Errors)
		}
		if r.Reconcile == nil || !r.Reconcile.OK || r.Reconcile.Lost != 0 || r.Reconcile.Duplicates != 0 {
			t.Errorf("reconcile %+v; want OK with 0 lost and 0 duplicates", r.Reconcile)
		}
	}
	n := cfg.Count + cfg.Warmup

	t.Run("pooled at 8 over HTTP/1.1 keeps at most 8 connections", func(t *testing.T) {
		r := run(t, func(c *Config) { c.HTTPVersion = "1.1" })
		sent(t, r, n)
		if r.TCPConnections < 1 || r.TCPConnections > 8 {
			t.Errorf("%d connections; want 1..8 at 8 in flight", r.TCPConnections)
		}
		if r.Protocols["HTTP/1.1"] != n || r.Scheme != "mtls" || r.Concurrency != 8 || r.PoolSize != 8 || r.HTTPVersion != "1.1" {
			t.Errorf("protocols %v, transport %s c%d pool %d %s; want all HTTP/1.1 and mtls c8 pool 8 1.1", r.Protocols, r.Scheme, r.Concurrency, r.PoolSize, r.HTTPVersion)
		}
	})
	t.Run("POOL_SIZE=2 at 8 churns past 8 connections", func(t *testing.T) {
		r := run(t, func(c *Config) { c.HTTPVersion, c.PoolSize = "1.1", 2 })
		sent(t, r, n)
		if r.TCPConnections <= 8 || r.PoolSize != 2 {
			t.Errorf("%d connections with pool %d; want more than 8 (2 idle kept of 8 in flight)", r.TCPConnections, r.PoolSize)
		}
	})
	t.Run("h2 at 8 shares one connection", func(t *testing.T) {
		r := run(t, func(c *Config) {})
		sent(t, r, n)
		if r.TCPConnections != 1 || r.Protocols["HTTP/2.0"] != n || len(r.Protocols) != 1 {
			t.Errorf("%d connections, protocols %v; want 1 and all %d sends HTTP/2.0", r.TCPConnections, r.Protocols, n)
		}
	})
	t.Run("mtls without a client certificate is refused", func(t *testing.T) {
		const refused = 5
		// The run's worker starts without the run's client certificate
		// (the stack would add it otherwise: vendormock.Stack.StartWorker)
		// and nginx refuses it (docs/vendor-api.md, status 421).
		editWorkerEnv = func(env map[string]string) { env["CLIENT_CERT_FILE"], env["CLIENT_KEY_FILE"] = "", "" }
		t.Cleanup(func() { editWorkerEnv = nil })
		r := run(t, func(c *Config) { c.Count, c.Warmup, c.Concurrency = refused, 0, 1 })
		if r.Outcomes[outcome.NotSent] != refused || len(r.Outcomes) != 1 {
			t.Errorf("outcomes %v; want %d NOT_SENT only", r.Outcomes, refused)
		}
		if len(r.Errors) == 0 || !strings.Contains(strings.Join(r.Errors, " "), "client certificate") {
			t.Errorf("errors %q; want a reason naming the client certificate", r.Errors)
		}
		journal, err := stack.Journal(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.JournalCount != 0 || len(journal) != 0 {
			t.Errorf("WireMock's journal holds %d requests (%d sends); want none", len(journal), r.JournalCount)
		}
		raw, err := os.ReadFile(filepath.Join(dir, t.Name(), r.AccessLog))
		if err != nil {
			t.Fatal(err)
		}
		entries, err := vendormock.ParseAccessLog(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			t.Fatal("no access log line: want nginx's refusals")
		}
		for _, e := range entries {
			if e.Status != 421 || e.UpstreamAddr != "" {
				t.Errorf("access log line %+v; want nginx's own 421, not proxied", e)
			}
		}
	})
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Error("test ran out of time")
	}
}

// startTestStack starts a vendor stack removed at the end of the test.
func startTestStack(ctx context.Context, t *testing.T, o vendormock.Options) *vendormock.Stack {
	o.Session = os.Getenv(vendormock.EnvSession) // the test is the edge that reads LAB_SESSION
	t.Helper()
	stack, err := vendormock.Start(ctx, o)
	if err != nil {
		t.Fatalf("start stack: %v", err)
	}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), CleanupTimeout)
		defer ccancel()
		if err := stack.Close(cctx); err != nil {
			t.Errorf("close stack: %v", err)
		}
	})
	return stack
}
