package report

import (
	"math"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// modelRun is a bench result with the fields the model table reads.
// nginx's upstream time is 20 ms unless the probe is 0 (an old file).
func modelRun(mode string, rtt int, p50, hs, connect, clientCPU, nginxCPU, proxyCPU, probe float64) results.Result {
	up := 20.0
	if probe == 0 {
		up = 0
	}
	r := results.Result{Mode: mode, RTTMS: rtt, LatencyMS: results.Latency{P50: p50}, UpstreamMSMean: up,
		PhaseP50MS:         results.Phases{ConnectMS: connect, TLSHandshakeMS: hs},
		ClientCPUMSPerSend: clientCPU, NginxCPUMSPerSend: nginxCPU, ProxyCPUMSPerSend: proxyCPU, ProbeRTTP50MS: probe,
		Measured: 300, TCPConnections: 350, TLSVersions: map[string]int{"TLSv1.2": 350}}
	if mode != "pooled" {
		r.TLSMax = "1.2"
	}
	return r
}

// TestModelRows: the rows' arithmetic from bench files: model round
// trips by mode (TLS 1.2 full 2, resumed 1), each part a difference
// against pooled, the forwarding from the two runs' probes, and the
// residual. At 3 ms the parts explain the penalty within 1 ms (no name);
// at 10 ms a planted 3 ms of the penalty that no part measures must be
// named, with where it lies (after the handshake).
func TestModelRows(t *testing.T) {
	rs := []results.Result{
		modelRun("pooled", 3, 24.0, 0, 0, 0.50, 0.20, 0.10, 4.0),
		// 2 x 3 + 0.2 connect + 1.5 worker + 0.4 nginx + 2 x 1.0 forwarding = 10.1; measured 10.5.
		modelRun("per-request", 3, 34.5, 9.5, 0.2, 2.00, 0.60, 0.30, 4.0),
		// 1 x 3 + 0.2 + 0.8 + 0.3 + 1 x 1.0 = 5.3; measured 5.0.
		modelRun("per-request-resume", 3, 29.0, 4.0, 0.2, 1.30, 0.50, 0.30, 4.0),
		modelRun("pooled", 10, 31.0, 0, 0, 0.50, 0.20, 0.10, 11.0),
		// 2 x 10 + 0.2 + 1.5 + 0.4 + 2 x 1.0 + 1.0 upstream = 25.1; measured 28.1: 3.0 unexplained.
		slower(modelRun("per-request", 10, 59.1, 23.5, 0.2, 2.00, 0.60, 0.30, 11.0), 1.0),
	}
	rows := ModelRows(rs)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3 (3 ms full and resumed, 10 ms full): %+v", len(rows), rows)
	}
	full3, res3, full10 := rows[0], rows[1], rows[2]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if full3.Mode != "per-request" || full3.Parts.RoundTrips != 2 || !near(full3.Parts.SumMS(), 10.1) || !near(full3.MeasuredMS, 10.5) ||
		!near(full3.ResidualMS, 0.4) || !full3.Within || full3.Unexplained != "" {
		t.Errorf("3 ms full: %+v; want 2 round trips, sum 10.1, measured 10.5, residual +0.4 within, unnamed", full3)
	}
	if !near(full3.Parts.WorkerCPUMS, 1.5) || !near(full3.Parts.NginxCPUMS, 0.4) || !near(full3.Parts.ForwardMS, 1.0) || !near(full3.ProxyCPUMS, 0.2) {
		t.Errorf("3 ms full parts %+v (proxy %v); want worker 1.5, nginx 0.4, forwarding 1.0, Toxiproxy 0.2", full3.Parts, full3.ProxyCPUMS)
	}
	if res3.Mode != "per-request-resume" || res3.Parts.RoundTrips != 1 || !near(res3.Parts.SumMS(), 5.3) || !near(res3.ResidualMS, -0.3) || !res3.Within {
		t.Errorf("3 ms resumed: %+v; want 1 round trip, sum 5.3, residual -0.3 within", res3)
	}
	if full10.Within || !near(full10.ResidualMS, 3.0) {
		t.Fatalf("10 ms full: %+v; want residual +3.0, not within", full10)
	}
	if !near(full10.Parts.UpstreamMS, 1.0) {
		t.Errorf("10 ms upstream part %v, want 1.0 (21.0 - 20.0)", full10.Parts.UpstreamMS)
	}
	for _, want := range []string{"3.0 ms unexplained", "3.5 ms beyond its 2 round trips", "3.4 ms of the penalty lies after the handshake and outside the vendor's answer"} {
		if !strings.Contains(full10.Unexplained, want) {
			t.Errorf("10 ms name %q lacks %q", full10.Unexplained, want)
		}
	}
	var b strings.Builder
	writeModelSections(&b, rs)
	md := b.String()
	for _, want := range []string{"## TLS session resumption", "## Round-trip model, measured parts", "| 10 ms | per-request | 1.2 | 2 (TLS 1.2 full 2) |",
		"**+3.0**", "- 10 ms, per-request (TLS 1.2): 3.0 ms unexplained", "| 3 ms | per-request-resume | 1.2 | 1 (TLS 1.2 resumed 1) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary sections lack %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "- 3 ms") {
		t.Errorf("a row within 1 ms was named:\n%s", md)
	}
}

// slower adds ms to r's nginx upstream time.
func slower(r results.Result, ms float64) results.Result {
	r.UpstreamMSMean += ms
	return r
}

// TestModelRowsNamesTheRest: parts that add up to more than measured
// (CPU off the send's path) are named as such; a run without nginx's CPU
// (a file written before it was measured) is never "explained".
func TestModelRowsNamesTheRest(t *testing.T) {
	over := ModelRows([]results.Result{
		modelRun("pooled", 3, 24.0, 0, 0, 0.50, 0.20, 0.10, 4.0),
		modelRun("per-request", 3, 32.0, 9.5, 0.2, 2.00, 0.60, 0.30, 4.0), // sum 10.1, measured 8.0
	})
	if len(over) != 1 || over[0].Within || !strings.Contains(over[0].Unexplained, "2.1 ms more than the send waited") {
		t.Errorf("over-counted row %+v; want named as 2.1 ms more than the send waited", over)
	}
	old := ModelRows([]results.Result{
		modelRun("pooled", 3, 24.0, 0, 0, 0.50, 0, 0, 0),
		modelRun("per-request", 3, 34.1, 9.5, 0.2, 2.00, 0, 0, 0),
	})
	if len(old) != 1 || old[0].Within || !strings.Contains(old[0].Unexplained, "not all parts were measured") {
		t.Errorf("row without nginx CPU %+v; want not within, named as not measured", old)
	}
	if hasModelParts([]results.Result{modelRun("pooled", 3, 24, 0, 0, 0.5, 0, 0, 0)}) {
		t.Error("a run without any model part asked for the model sections")
	}
}

// TestModelRowsSharedClosing: the shared client whose engine closes
// every connection (shared-closing) is a new-connection client too: it
// gets its own row against pooled with a full handshake's round trips,
// after per-request's, in the summary's table.
func TestModelRowsSharedClosing(t *testing.T) {
	rs := []results.Result{
		modelRun("pooled", 3, 24.0, 0, 0, 0.50, 0.20, 0.10, 4.0),
		modelRun("shared-closing", 3, 33.5, 9.0, 0.2, 1.80, 0.60, 0.30, 4.0),
		modelRun("per-request", 3, 34.5, 9.5, 0.2, 2.00, 0.60, 0.30, 4.0),
	}
	rows := ModelRows(rs)
	if len(rows) != 2 || rows[0].Mode != "per-request" || rows[1].Mode != "shared-closing" {
		t.Fatalf("rows %+v; want per-request then shared-closing", rows)
	}
	sc := rows[1]
	// 2 x 3 + 0.2 connect + 1.3 worker + 0.4 nginx + 2 x 1.0 forwarding = 9.9; measured 9.5.
	if sc.Parts.RoundTrips != 2 || math.Abs(sc.Parts.SumMS()-9.9) > 1e-9 || math.Abs(sc.MeasuredMS-9.5) > 1e-9 || !sc.Within {
		t.Errorf("shared-closing row %+v; want 2 round trips, sum 9.9, measured 9.5, within", sc)
	}
	var b strings.Builder
	writeModelSections(&b, rs)
	if md := b.String(); !strings.Contains(md, "| 3 ms | shared-closing | 1.2 | 2 (TLS 1.2 full 2) |") {
		t.Errorf("summary lacks the shared-closing row:\n%s", md)
	}
}

// TestModelPartsPlot: the chart draws one group per row and refuses
// results without a pair.
func TestModelPartsPlot(t *testing.T) {
	rs := []results.Result{
		modelRun("pooled", 3, 24.0, 0, 0, 0.50, 0.20, 0.10, 4.0),
		modelRun("per-request", 3, 34.5, 9.5, 0.2, 2.00, 0.60, 0.30, 4.0),
	}
	p, err := ModelPartsPlot(rs)
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Max != 0.5 {
		t.Errorf("x axis to %v, want 0.5 (one group)", p.X.Max)
	}
	// shared-closing is named as itself under its bar, not "resumed".
	for mode, want := range map[string]string{"per-request": "full", "per-request-resume": "resumed", "shared-closing": "shared-closing"} {
		if got := chartModeName(mode); got != want {
			t.Errorf("chartModeName(%s) = %q, want %q", mode, got, want)
		}
	}
	if _, err := ModelPartsPlot(rs[:1]); err == nil {
		t.Error("a pooled run alone drew a model chart")
	}
}

// TestResumptionSectionOnlyWithResumption: a run of the case's two
// clients with nginx's cache off gets the model table but no resumption
// section.
func TestResumptionSectionOnlyWithResumption(t *testing.T) {
	rs := []results.Result{
		modelRun("pooled", 3, 24.0, 0, 0, 0.50, 0.20, 0.10, 4.0),
		modelRun("per-request", 3, 34.5, 9.5, 0.2, 2.00, 0.60, 0.30, 4.0),
	}
	var b strings.Builder
	writeModelSections(&b, rs)
	if md := b.String(); strings.Contains(md, "## TLS session resumption") || !strings.Contains(md, "## Round-trip model, measured parts") {
		t.Errorf("sections without resumption:\n%s", md)
	}
	rs[1].TLSResumption = "on"
	b.Reset()
	writeModelSections(&b, rs)
	if !strings.Contains(b.String(), "## TLS session resumption") {
		t.Error("TLS_RESUMPTION=on without the resumption section")
	}
}
