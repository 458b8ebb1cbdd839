//go:build integration

package audit

import (
	"context"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// TestIntegrationBurstAndVendorH1Lane runs the burst probe and the
// replay probe's vendor-forced HTTP/1.1 lane against planted Go workers
// on one stack (alimtalk); about 2 minutes:
//   - burst: the Go worker at concurrency 8 with the per-request strategy
//     (a new client and connection per send) is caught, a new connection
//     per send (FAIL); the pooled one (the control) keeps at most the
//     sends in flight + 1 connections and carries several sends on one
//     (PASS), its token call on a connection that then carried sends;
//   - replay: a worker that speaks HTTP/2 with the transport's replays
//     switched back on, run as an image that picks its protocol itself:
//     its choice (HTTP/2) re-sends a reset POST; with the vendor offering
//     only http/1.1 the proxy resets its sends over HTTP/1.1 and none is
//     sent again (Go's HTTP/1.1 transport does not replay a POST without
//     an idempotency key).
func TestIntegrationBurstAndVendorH1Lane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, images, target := probeStack(ctx, t)

	t.Run("burst", func(t *testing.T) {
		per, err := ProbeBurst(ctx, target(func(c *worker.Config) { c.Strategy = vendorapi.PerRequestName }), "itb")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("per-request: %s; %s", per.Measured(), per.Trail())
		if v, why := per.Judge(); v != Fail || per.MaxPerConnection != 1 || per.Sends != BurstSends {
			t.Errorf("planted per-request client: %s (%s): want FAIL, a new connection per each of %d sends", v, why, BurstSends)
		}
		ctl, err := ProbeBurst(ctx, target(nil), "itc")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("pooled: %s; %s", ctl.Measured(), ctl.Trail())
		if v, why := ctl.Judge(); v != Pass || ctl.Sends != BurstSends || ctl.PeakInFlight < 2 || ctl.MaxPerConnection < 2 {
			t.Errorf("pooled control: %s (%s): want PASS with sends overlapping (peak %d) and reuse", v, why, ctl.PeakInFlight)
		}
		if ctl.Concurrency != BurstConcurrency || ctl.TokenCalls == 0 {
			t.Errorf("pooled control: concurrency %d, token calls %d: want %d and the token call seen", ctl.Concurrency, ctl.TokenCalls, BurstConcurrency)
		}
	})

	t.Run("replay vendor-forced HTTP/1.1", func(t *testing.T) {
		tg := target(func(c *worker.Config) { c.HTTPVersion, c.UnsafeAllowTransportReplay = "2", true })
		m, err := ProbeReplay(ctx, tg, "ith", images.StreamReset, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range m.Lanes {
			t.Logf("%s", l.Measured())
		}
		if len(m.Lanes) != 2 || m.Skipped != "" {
			t.Fatalf("lanes %+v (skipped %q): want the client's choice and the vendor-forced HTTP/1.1 lane", m.Lanes, m.Skipped)
		}
		if c := m.Lanes[0]; c.Lane != LaneChoice || c.Resets["HTTP/2"] == 0 || len(c.Replayed) == 0 {
			t.Errorf("the client's choice: %s: want HTTP/2 resets, a reset POST sent again", c.Measured())
		}
		if h := m.Lanes[1]; h.Lane != LaneVendorH1 || h.Unknown != "" || h.Resets["HTTP/1.1"] == 0 || h.Resets["HTTP/2"] != 0 || len(h.Replayed) != 0 {
			t.Errorf("vendor-forced HTTP/1.1: %s: want HTTP/1.1 resets only and nothing sent again", h.Measured())
		}
	})
}
