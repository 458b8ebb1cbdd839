package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// ReportOption sets an option of the summary (NewMarkdownReporter,
// WriteReport).
type ReportOption func(*reportOptions)

type reportOptions struct {
	bulk    int
	verdict *results.Verdict
}

// WithVerdict puts v, the run's verdict (OUT/verdict.json), in the
// summary, below its header: pass or fail, and each failed check. nil
// leaves it out.
func WithVerdict(v *results.Verdict) ReportOption {
	return func(o *reportOptions) { o.verdict = v }
}

// verdictLine is the summary's verdict: "Verdict: **pass** (N checks...)"
// or "Verdict: **FAIL**" and one line per failed check; "" for nil.
func verdictLine(v *results.Verdict) string {
	if v == nil {
		return ""
	}
	if v.Pass {
		return fmt.Sprintf("Verdict: **pass**: %s (delivery: 0 lost and 0 duplicated in every run; thresholds when given); `verdict.json` lists them.\n\n", v.ChecksPassed())
	}
	var b strings.Builder
	failed := 0
	for _, c := range v.Checks {
		if !c.Pass {
			failed++
		}
	}
	fmt.Fprintf(&b, "Verdict: **FAIL**: %d of %d checks failed (`verdict.json`):\n\n", failed, len(v.Checks))
	for _, c := range v.Checks {
		if c.Pass {
			continue
		}
		fmt.Fprintf(&b, "- %s, %s: %g %s, limit %g", c.Name, c.Run, c.Value, c.Unit, c.Limit)
		if c.Detail != "" {
			fmt.Fprintf(&b, " (%s)", c.Detail)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}

// WithBulk sets how many messages the bulk projection is for (BULK;
// DefaultBulk when not given or < 1).
func WithBulk(n int) ReportOption {
	return func(o *reportOptions) {
		if n > 0 {
			o.bulk = n
		}
	}
}

func newReportOptions(opts []ReportOption) reportOptions {
	o := reportOptions{bulk: DefaultBulk}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// networkLine says which network the results were measured on.
func networkLine(rs []results.Result) string {
	switch handshakeTitle(rs) {
	case "TCP_HANDSHAKE=on":
		return "Network: TCP_HANDSHAKE=on: Toxiproxy's handshake toxic makes a new connection wait one RTT before its first byte, as the TCP handshake does on a real network."
	case "TCP_HANDSHAKE=off":
		return "Network: TCP_HANDSHAKE=off: stock Toxiproxy (the case's own conditions) delays data, not the TCP handshake, so a new connection costs one RTT less here than on a real network."
	}
	return "Network: TCP_HANDSHAKE differs between these runs (see the tcp_handshake field of each bench file)."
}

// modelTable is the round-trip model beside the measurement, per RTT.
func modelTable(rs []results.Result) (t table) {
	t.header = []string{"RTT", "per-request TLS", "TCP_HANDSHAKE", "model penalty RTTs", "model ms", "measured ms (p50 per-request - pooled)", "measured RTTs", "p50 ratio per-request / pooled"}
	for _, p := range Penalties(rs) {
		t.rows = append(t.rows, []string{fmt.Sprintf("%d ms", p.RTTMS), p.TLSVersion, p.TCPHandshake,
			modelRTTsLabel(p), f1(p.ModelMS), f1(p.MeasuredMS), nanDash(p.MeasuredRTTs, f2), nanDash(p.Ratio, func(v float64) string { return f2(v) + "x" })})
	}
	return t
}

func modelRTTsLabel(p Penalty) string {
	if p.ModelRTTs < 0 {
		return "-"
	}
	parts := []string{}
	if p.TCPHandshake == netmodel.HandshakeOn {
		parts = append(parts, "TCP 1")
	}
	n, _ := netmodel.TLSRoundTrips(p.TLSVersion)
	parts = append(parts, fmt.Sprintf("TLS %s handshake %d", p.TLSVersion, n))
	return fmt.Sprintf("%d (%s)", p.ModelRTTs, strings.Join(parts, " + "))
}

func nanDash(v float64, f func(float64) string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return f(v)
}

// sweepTable is p50 and p99 per mode and RTT with the ratio, beside study
// B's ratio where it measured that RTT and rs are comparable with it, and
// the case's.
func sweepTable(rs []results.Result) (t table) {
	t.header = []string{"RTT", "per-request p50 / p99 ms", "pooled p50 / p99 ms", "ratio (lab)", "ratio (case)", "ratio (Node study)", "sends per point"}
	node := comparableWithNodeStudy(rs)
	for _, rtt := range rtts(rs) {
		row := []string{fmt.Sprintf("%d ms", rtt)}
		var counts []string
		for _, m := range []string{vendorapi.PerRequestName, vendorapi.PooledName} {
			r, ok := find(rs, rtt, m)
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, f1(r.LatencyMS.P50)+" / "+f1(r.LatencyMS.P99))
			c := fmt.Sprintf("%s %d", m, r.Count)
			if r.CountRequested > 0 && r.CountRequested != r.Count {
				c += fmt.Sprintf(" (of %d)", r.CountRequested)
			}
			counts = append(counts, c)
		}
		ratio := "-"
		for _, p := range Penalties(rs) {
			if p.RTTMS == rtt {
				ratio = nanDash(p.Ratio, func(v float64) string { return f2(v) + "x" })
			}
		}
		caseRatio, nodeRatio := "-", "-"
		pr, ok1 := CaseFigureFor(rtt, vendorapi.PerRequestName)
		po, ok2 := CaseFigureFor(rtt, vendorapi.PooledName)
		if ok1 && ok2 {
			caseRatio = f2(pr.P50MS/po.P50MS) + "x"
		}
		if node {
			for _, s := range nodeStudyPoints {
				if s.RTTMS == rtt {
					nodeRatio = fmt.Sprintf("%.2fx (%.0f vs %.0f ms)", s.Ratio(), s.NewConnP50, s.ReusedP50)
				}
			}
		}
		t.rows = append(t.rows, append(row, ratio, caseRatio, nodeRatio, strings.Join(counts, ", ")))
	}
	return t
}

// projectionTable is the calculated bulk run per result.
func projectionTable(rs []results.Result, bulk int) (t table) {
	w := window.Default()
	t.header = []string{"RTT", "client", fmt.Sprintf("%s sends at p50", thousands(bulk)), "at the measured rate", "latest start (Asia/Seoul)"}
	for _, p := range Projections(rs, bulk, w) {
		r, _ := find(rs, p.RTTMS, p.Mode)
		start := p.LatestStart
		if start == "" {
			start = "does not fit in one window"
		}
		t.rows = append(t.rows, []string{fmt.Sprintf("%d ms", p.RTTMS), clientLabel(r), formatDuration(p.AtP50), formatDuration(p.AtRate), start})
	}
	return t
}

// phaseTable is p50 and p99 per phase and the TIME_WAIT sockets per run.
func phaseTable(rs []results.Result) (t table) {
	t.header = []string{"RTT", "client", "connect p50 / p99 ms", "TLS handshake p50 / p99 ms", "TTFB p50 / p99 ms", "new connection self-check ms", "TIME_WAIT at end / peak (worker)"}
	sorted := append([]results.Result(nil), rs...)
	results.SortResults(sorted)
	for _, r := range sorted {
		// Results written before p99 per phase existed show "-" for it.
		noP99 := r.PhaseP99MS == (results.Phases{})
		pair := func(a, b float64) string {
			if noP99 {
				return f1(a) + " / -"
			}
			return f1(a) + " / " + f1(b)
		}
		tw := "-"
		if r.TimeWait != nil && r.TimeWait.Samples > 0 {
			tw = fmt.Sprintf("%s / %s", thousands(r.TimeWait.Last), thousands(r.TimeWait.Peak))
		}
		self := "-"
		if r.SelfCheckNewConnMS > 0 {
			self = f1(r.SelfCheckNewConnMS)
		}
		t.rows = append(t.rows, []string{fmt.Sprintf("%d ms", r.RTTMS), clientLabel(r),
			pair(r.PhaseP50MS.ConnectMS, r.PhaseP99MS.ConnectMS), pair(r.PhaseP50MS.TLSHandshakeMS, r.PhaseP99MS.TLSHandshakeMS),
			pair(r.PhaseP50MS.TTFBMS, r.PhaseP99MS.TTFBMS), self, tw})
	}
	return t
}

// writeNetworkSections writes the model, sweep, bulk projection and
// phases sections of the summary.
func writeNetworkSections(b *strings.Builder, rs []results.Result, o reportOptions) {
	if m := modelTable(rs); len(m.rows) > 0 {
		b.WriteString("\n## Round-trip model\n\n")
		b.WriteString("Expected per-request penalty per send, in RTTs: 1 for the TCP handshake when TCP_HANDSHAKE=on, plus 2 for a TLS 1.2 or 1 for a TLS 1.3 handshake; beside it the measured one (per-request p50 - pooled p50).\n\n")
		mdTable(b, m)
	}
	writeModelSections(b, rs)
	if len(rtts(rs)) >= 2 {
		b.WriteString("\n## RTT sweep\n\n")
		mdTable(b, sweepTable(rs))
		b.WriteString("\nCharts: [p50](charts/" + SweepP50Chart + "), [p99](charts/" + SweepP99Chart + "), [ratio](charts/" + SweepRatioChart + "); a latency distribution per run: charts/cdf-<mode>-<rtt>ms.svg.\n")
		if capped(rs) {
			fmt.Fprintf(b, "\nSends per point shrink with RTT: COUNT and WARMUP are capped so a point takes about %.0f s (%.0f s of warm-up) at the model's time per send, SERVER_DELAY_MS + round trips x RTT, never below %d (%d); \"(of N)\" is the COUNT asked. Fewer sends make p99 coarser at the largest RTTs.\n", netmodel.PointBudget.
				Seconds(), netmodel.WarmupBudget.Seconds(), netmodel.MinPointCount, netmodel.MinPointWarmup)
		}
		if comparableWithNodeStudy(rs) {
			fmt.Fprintf(b, "\nNode study (docs/studies.md, study B): medians 155 vs 462 ms at 150 ms and 385 vs 1,153 ms at 380 ms; ratio %.1fx-%.1fx at every RTT from %d to %d ms. Its proxy held the first byte until 1.5 RTT after connect; the lab's handshake toxic holds it one RTT after accept.\n",
				NodeStudyRatioLow, NodeStudyRatioHigh, NodeStudyRatioMinMS, NodeStudyRatioMaxMS)
		}
	}
	b.WriteString("\n## Bulk projection (calculated, not measured)\n\n")
	fmt.Fprintf(b, "%s back-to-back sends at each run's p50 and at its measured rate (wall time / sends, which includes the worker's own work), and the latest start that still ends before the send window closes at 20:50 Asia/Seoul (docs/case.md, \"Delivery rules\"; the longer of the two projections decides).\n\n", thousands(o.bulk))
	mdTable(b, projectionTable(rs, o.bulk))
	b.WriteString("\n## Phases and TIME_WAIT\n\n")
	b.WriteString("Per-phase p50 and p99 of the measured sends (a phase that did not happen counts 0), the self-check's new connection (time to first response byte), and the TIME_WAIT sockets in the worker's network namespace, sampled while it ran (the side that closes first keeps them for 60 s, so a run longer than a minute shows fewer than its connections). With TCP_HANDSHAKE=on the TCP round trip shows in the TLS handshake phase: through Toxiproxy connect() returns at once and the handshake toxic holds the ClientHello.\n\n")
	mdTable(b, phaseTable(rs))
}

// capped reports whether any result had its COUNT or WARMUP capped.
func capped(rs []results.Result) bool {
	for _, r := range rs {
		if r.CountRequested > 0 || r.WarmupRequested > 0 {
			return true
		}
	}
	return false
}
