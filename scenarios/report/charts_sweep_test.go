package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"gonum.org/v1/plot/vg"
)

// sweepResults is a small sweep at study B's settings (SERVER_DELAY_MS=0,
// per-request on TLS 1.3), with the handshake toxic on.
func sweepResults(delayMS int, tlsMax string) []results.Result {
	var rs []results.Result
	for _, rtt := range []int{0, 10, 150} {
		lat := float64(rtt) + 1
		rs = append(rs, results.Result{Mode: "per-request", RTTMS: rtt, TLSMax: tlsMax, ServerDelayMS: delayMS, TCPHandshake: netmodel.HandshakeOn,
			LatencyMS: results.Latency{P50: 3 * lat, P99: 3.5 * lat}, Measured: 10,
			LatencyCDF: []results.CDFPoint{{Q: 0, MS: 3 * lat}, {Q: 0.5, MS: 3 * lat}, {Q: 1, MS: 3.5 * lat}}}, results.Result{Mode: "pooled", RTTMS: rtt, ServerDelayMS: delayMS, TCPHandshake: netmodel.HandshakeOn,
			LatencyMS: results.Latency{P50: lat, P99: 1.2 * lat}, Measured: 10})
	}
	return rs
}

func svgOf(t *testing.T, p interface {
	Save(w, h vg.Length, file string) error
}) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.svg")
	if err := p.Save(chartWidth, chartHeight, path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSweepPlotsShowTheStudyOnlyWhenComparable(t *testing.T) {
	tests := []struct {
		name      string
		rs        []results.Result
		wantStudy bool
	}{
		{"study settings", sweepResults(0, "1.3"), true},
		{"case settings", sweepResults(18, "1.2"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p50, err := SweepLatencyPlot(tt.rs, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			ratio, err := SweepRatioPlot(tt.rs)
			if err != nil {
				t.Fatal(err)
			}
			for name, svg := range map[string]string{"p50": svgOf(t, p50), "ratio": svgOf(t, ratio)} {
				if got := strings.Contains(svg, "Node study"); got != tt.wantStudy {
					t.Errorf("%s chart shows the Node study: %v, want %v", name, got, tt.wantStudy)
				}
				if !strings.Contains(svg, "TCP_HANDSHAKE=on") {
					t.Errorf("%s chart does not say TCP_HANDSHAKE=on", name)
				}
				if !strings.Contains(svg, "case") {
					t.Errorf("%s chart lacks the case's points", name)
				}
			}
		})
	}
}

func TestWriteSweepCharts(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSweepCharts(dir, sweepResults(0, "1.3")); err != nil {
		t.Fatalf("WriteSweepCharts: %v", err)
	}
	for _, f := range []string{SweepP50Chart, SweepP99Chart, SweepRatioChart,
		CDFChartFile("per-request", 0), CDFChartFile("per-request", 150)} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.HasPrefix(bytes.TrimSpace(b), []byte("<?xml")) {
			t.Errorf("%s: %v, want an SVG file", f, err)
		}
	}
	// pooled results carry no distribution: no CDF chart for them.
	if _, err := os.Stat(filepath.Join(dir, CDFChartFile("pooled", 10))); !os.IsNotExist(err) {
		t.Errorf("cdf chart for a result without a distribution: %v, want none", err)
	}
	// Only RTT 0: no sweep chart (a log axis cannot show it), no error.
	only0 := t.TempDir()
	if err := WriteSweepCharts(only0, sweepResults(0, "1.3")[:2]); err != nil {
		t.Fatalf("RTT 0 only: %v", err)
	}
	if _, err := os.Stat(filepath.Join(only0, SweepP50Chart)); !os.IsNotExist(err) {
		t.Errorf("RTT 0 only: sweep chart written (%v), want none", err)
	}
}

func TestCDFPlotNeedsData(t *testing.T) {
	if _, err := CDFPlot(results.Result{Mode: "pooled", RTTMS: 10}); err == nil {
		t.Error("no distribution: no error")
	}
}

func TestMarkdownNetworkSections(t *testing.T) {
	rs := sweepResults(0, "1.3")
	rs[4].Count, rs[4].CountRequested = 52, 200 // per-request at 150 ms, capped
	var b strings.Builder
	if err := NewMarkdownReporter(rs, WithBulk(500))(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"Network: TCP_HANDSHAKE=on",
		"## Round-trip model",
		"| 150 ms | 1.3 | on | 2 (TCP 1 + TLS 1.3 handshake 1) | 300.0 | 302.0 | 2.01 | 3.00x |",
		"## RTT sweep",
		"2.98x (462 vs 155 ms)",
		"per-request 52 (of 200)",
		"Sends per point shrink with RTT",
		"500 sends at p50",
		"## Bulk projection (calculated, not measured)",
		"## Phases and TIME_WAIT",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	// At the case's settings the study's figures are not put beside the lab's.
	b.Reset()
	if err := NewMarkdownReporter(sweepResults(18, "1.2"))(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "462 vs 155") || strings.Contains(b.String(), "Sends per point shrink") {
		t.Error("case settings, nothing capped: summary shows the Node study or the cap note")
	}
}
