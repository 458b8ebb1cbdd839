package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// ModelRow is one new-connection client (per-request,
// per-request-resume or shared-closing) against pooled at one RTT: the round-trip model,
// the parts of the penalty measured in the same runs, the measured
// penalty (p50 new - p50 pooled) and what the parts leave unexplained.
// Times are ms; a part not measured is NaN.
type ModelRow struct {
	RTTMS        int
	Mode         string // vendorapi.PerRequestName, PerRequestResumeName or SharedClosingName
	TLSVersion   string // the new-connection client's highest TLS version
	TCPHandshake string
	Parts        netmodel.Parts
	// ProxyCPUMS is Toxiproxy's container CPU per send, new minus pooled:
	// shown, not added (its forwarding is in Parts.ForwardMS).
	ProxyCPUMS float64
	// HandshakeP50MS is the new connections' TLS handshake phase p50.
	HandshakeP50MS float64
	MeasuredMS     float64 // p50 new - p50 pooled
	ResidualMS     float64 // MeasuredMS - Parts.SumMS()
	Within         bool    // |ResidualMS| <= netmodel.ResidualLimitMS
	// Unexplained names what remains when not Within ("" when Within).
	Unexplained string
}

// newConnModes are the strategies that open a connection per send, in
// report order.
var newConnModes = []string{vendorapi.PerRequestName, vendorapi.PerRequestResumeName, vendorapi.SharedClosingName}

// ModelRows returns one ModelRow per RTT and new-connection mode that rs
// hold beside a pooled run at the same RTT, in RTT then mode order. A
// per-request result without a TLS cap counts as TLS 1.2.
func ModelRows(rs []results.Result) []ModelRow {
	var out []ModelRow
	for _, rtt := range rtts(rs) {
		po, ok := find(rs, rtt, vendorapi.PooledName)
		if !ok {
			continue
		}
		for _, m := range newConnModes {
			nr, ok := find(rs, rtt, m)
			if !ok {
				continue
			}
			out = append(out, modelRow(nr, po))
		}
	}
	return out
}

// modelRow builds the row of the new-connection result nr against the
// pooled result po (same RTT).
func modelRow(nr, po results.Result) ModelRow {
	tlsV := nr.TLSMax
	if tlsV == "" {
		tlsV = netmodel.DefaultPerRequestTLS
	}
	hs := handshakeLabel(nr)
	n, err := netmodel.ModePenaltyRTTs(nr.Mode, tlsV, hs)
	if err != nil {
		n = 0
	}
	row := ModelRow{RTTMS: nr.RTTMS, Mode: nr.Mode, TLSVersion: tlsV, TCPHandshake: hs,
		HandshakeP50MS: nr.PhaseP50MS.TLSHandshakeMS, MeasuredMS: nr.LatencyMS.P50 - po.LatencyMS.P50}
	row.Parts = netmodel.Parts{
		RTTMS: float64(nr.RTTMS), RoundTrips: n,
		ConnectMS:   nr.PhaseP50MS.ConnectMS,
		WorkerCPUMS: nr.ClientCPUMSPerSend - po.ClientCPUMSPerSend,
		NginxCPUMS:  cpuDelta(nr.NginxCPUMSPerSend, po.NginxCPUMSPerSend),
		ForwardMS:   forwardMS(nr, po),
		UpstreamMS:  cpuDelta(nr.UpstreamMSMean, po.UpstreamMSMean),
	}
	row.ProxyCPUMS = cpuDelta(nr.ProxyCPUMSPerSend, po.ProxyCPUMSPerSend)
	row.ResidualMS, row.Within = row.Parts.Residual(row.MeasuredMS)
	if !row.Within {
		row.Unexplained = nameResidual(row)
	}
	return row
}

// cpuDelta is a - b, NaN when either was not measured (0: written before
// it was; < 0: not readable). It serves every per-send figure that is
// positive when measured (CPU, nginx's upstream time).
func cpuDelta(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return math.NaN()
	}
	return a - b
}

// forwardMS is one round trip's cost beyond the RTT through the proxy:
// the mean of the two runs' probe p50 minus the RTT; NaN when either run
// has no probe.
func forwardMS(a, b results.Result) float64 {
	if a.ProbeRTTP50MS <= 0 || b.ProbeRTTP50MS <= 0 {
		return math.NaN()
	}
	return (a.ProbeRTTP50MS+b.ProbeRTTP50MS)/2 - float64(a.RTTMS)
}

// nameResidual says, from the row's own measured phases, where the
// unexplained time lies: inside the TLS handshake phase beyond its round
// trips and the parts, or after it (the first request on a new
// connection against a reused one), or that the parts count more than the
// send waited for.
func nameResidual(r ModelRow) string {
	p := r.Parts
	if math.IsNaN(r.ResidualMS) {
		return "not all parts were measured (a bench file without nginx's CPU, its upstream time or the probe round trips)"
	}
	hsRTTs := p.RoundTrips // with TCP_HANDSHAKE=on its round trip shows in the handshake phase too
	inHS := r.HandshakeP50MS - float64(hsRTTs)*p.RTTMS
	after := r.MeasuredMS - p.ConnectMS - r.HandshakeP50MS - p.UpstreamMS
	cpu := p.WorkerCPUMS + p.NginxCPUMS + p.ForwardTotalMS()
	if r.ResidualMS < 0 {
		return fmt.Sprintf("the parts add up to %.1f ms more than the send waited: the TLS handshake phase took %.1f ms beyond its %d round trips, less than the CPU and forwarding parts (%.1f ms), so some of that CPU is not on the send's path (work nginx or the worker does after the response, such as closing the connection, or in parallel with a round trip)",
			-r.ResidualMS, inHS, hsRTTs, cpu)
	}
	return fmt.Sprintf("%.1f ms unexplained: the TLS handshake phase took %.1f ms beyond its %d round trips (CPU and forwarding parts %.1f ms), and %.1f ms of the penalty lies after the handshake and outside the vendor's answer, in the first request on a new connection against one on a reused connection, which no part measures",
		r.ResidualMS, inHS, hsRTTs, cpu, after)
}

// modelPartsTable is ModelRows as a table: the model, each measured part,
// their sum, the measured penalty and the residual.
func modelPartsTable(rs []results.Result) (t table) {
	t.header = []string{"RTT", "client", "TLS", "model RTTs", "model ms", "TCP connect", "worker CPU", "nginx CPU", "forwarding (per RTT x RTTs)",
		"vendor answer (nginx upstream time)", "sum ms", "measured ms (p50 - pooled p50)", "residual ms", "Toxiproxy CPU (not added)"}
	for _, r := range ModelRows(rs) {
		p := r.Parts
		res := signed(r.ResidualMS)
		if !r.Within {
			res = "**" + res + "**"
		}
		t.rows = append(t.rows, []string{fmt.Sprintf("%d ms", r.RTTMS), r.Mode, r.TLSVersion, modeRTTsLabel(r), f1(p.ModelMS()),
			f2(p.ConnectMS), nanDash(p.WorkerCPUMS, f2), nanDash(p.NginxCPUMS, f2),
			nanDash(p.ForwardMS, func(v float64) string { return fmt.Sprintf("%.2f x %d = %.2f", v, p.RoundTrips, p.ForwardTotalMS()) }),
			nanDash(p.UpstreamMS, f2), nanDash(p.SumMS(), f1), f1(r.MeasuredMS), nanDash(r.ResidualMS, func(float64) string { return res }), nanDash(r.ProxyCPUMS, f2)})
	}
	return t
}

// modeRTTsLabel is "2 (TLS 1.2 full 2)", "2 (TCP 1 + TLS 1.2 resumed 1)".
func modeRTTsLabel(r ModelRow) string {
	var parts []string
	if r.TCPHandshake == netmodel.HandshakeOn {
		parts = append(parts, "TCP 1")
	}
	resumed := r.Mode == vendorapi.PerRequestResumeName
	n, _ := netmodel.HandshakeRoundTrips(r.TLSVersion, resumed)
	kind := "full"
	if resumed {
		kind = "resumed"
	}
	parts = append(parts, fmt.Sprintf("TLS %s %s %d", r.TLSVersion, kind, n))
	return fmt.Sprintf("%d (%s)", r.Parts.RoundTrips, strings.Join(parts, " + "))
}

// signed writes v with its sign, one decimal.
func signed(v float64) string { return fmt.Sprintf("%+.1f", v) }

// resumptionTable is, per RTT and mode, p50, the TLS handshake phase,
// the worker's CPU, nginx's CPU, connections and resumed sessions as
// nginx and the worker saw them, with the model's round trips.
func resumptionTable(rs []results.Result) (t table) {
	t.header = []string{"RTT", "client", "TLS", "p50 ms", "TLS handshake p50 ms", "model handshake RTTs", "worker CPU ms/send (send call)", "nginx CPU ms/send",
		"TCP conns", "resumed (nginx $ssl_session_reused)", "resumed (worker trace, measured sends)"}
	for _, rtt := range rtts(rs) {
		for _, m := range results.KnownModes {
			r, ok := find(rs, rtt, m)
			if !ok {
				continue
			}
			tlsV := r.TLSMax
			if tlsV == "" && m != vendorapi.PooledName {
				tlsV = netmodel.DefaultPerRequestTLS
			}
			model := "0 (reused)"
			if m != vendorapi.PooledName {
				n, _ := netmodel.HandshakeRoundTrips(tlsV, m == vendorapi.PerRequestResumeName)
				model = fmt.Sprintf("%d", n)
			}
			tlsCol := versionsLabel(r)
			t.rows = append(t.rows, []string{fmt.Sprintf("%d ms", rtt), m, tlsCol, f1(r.LatencyMS.P50), f1(r.PhaseP50MS.TLSHandshakeMS), model,
				f2(r.ClientCPUMSPerSend), nanDash(cpuOrNaN(r.NginxCPUMSPerSend), f2), thousands(r.TCPConnections),
				thousands(r.TLSSessionsResumed), fmt.Sprintf("%d/%d", r.ClientResumed, r.Measured)})
		}
	}
	return t
}

// cpuOrNaN is v, or NaN when it was not measured (<= 0).
func cpuOrNaN(v float64) float64 {
	if v <= 0 {
		return math.NaN()
	}
	return v
}

// versionsLabel is what nginx negotiated: "TLSv1.2" or "TLSv1.2 1049, TLSv1.3 1".
func versionsLabel(r results.Result) string {
	if len(r.TLSVersions) == 1 {
		for v := range r.TLSVersions {
			return v
		}
	}
	var parts []string
	for _, v := range []string{"TLSv1.2", "TLSv1.3"} {
		if n := r.TLSVersions[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, n))
		}
	}
	return strings.Join(parts, ", ")
}

// hasModelParts reports whether rs measured the parts (nginx's CPU or the
// probe round trips) or hold a per-request-resume run.
func hasModelParts(rs []results.Result) bool {
	for _, r := range rs {
		if r.NginxCPUMSPerSend != 0 || r.ProbeRTTP50MS > 0 || r.Mode == vendorapi.PerRequestResumeName {
			return true
		}
	}
	return false
}

// writeModelSections writes the resumption section (when rs have a
// per-request-resume run or nginx's session cache on) and the
// measured-parts section of the summary when rs have the parts
// (hasModelParts).
func writeModelSections(b *strings.Builder, rs []results.Result) {
	if !hasModelParts(rs) {
		return
	}
	if hasResumption(rs) {
		writeResumptionSection(b, rs)
	}
	writePartsSection(b, rs)
}

// hasResumption reports whether rs hold a per-request-resume run or one
// with nginx's session cache on.
func hasResumption(rs []results.Result) bool {
	for _, r := range rs {
		if r.Mode == vendorapi.PerRequestResumeName || r.TLSResumption == "on" {
			return true
		}
	}
	return false
}

// writeResumptionSection writes the "TLS session resumption" section.
func writeResumptionSection(b *strings.Builder, rs []results.Result) {
	b.WriteString("\n## TLS session resumption\n\n")
	b.WriteString("Per client: p50, the TLS handshake phase, the round trips the model gives its handshake (TLS 1.2 full 2, resumed 1; TLS 1.3 full 1, resumed 1: without 0-RTT a resumed TLS 1.3 handshake still waits one round trip), the worker's CPU inside the send call, nginx's container CPU per send, and how many handshakes resumed a session: by nginx's $ssl_session_reused over every connection that carried a send (warm-up included) and by the worker's trace over the measured sends.\n\n")
	mdTable(b, resumptionTable(rs))
}

// writePartsSection writes the "Round-trip model, measured parts"
// section when rs hold a new-connection run beside a pooled one.
func writePartsSection(b *strings.Builder, rs []results.Result) {
	rows := ModelRows(rs)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## Round-trip model, measured parts\n\n")
	fmt.Fprintf(b, "The per-send penalty of a new connection (p50 minus pooled p50) against the model's round trips plus the parts measured in the same runs: the TCP connect phase p50, the worker's CPU inside the send call and nginx's container CPU per send (each minus pooled's), and what one round trip through Toxiproxy costs beyond the RTT (p50 of %d probes on an established connection, minus the RTT) times the extra round trips, and how much longer the vendor took to answer behind nginx (mean $upstream_response_time, new minus pooled). A residual beyond %.0f ms is named below the table. Toxiproxy's own CPU is shown, not added: its forwarding is in the probe's figure.\n\n", netmodel.ProbeCount, netmodel.ResidualLimitMS)
	mdTable(b, modelPartsTable(rs))
	b.WriteString("\nChart: [model + parts vs measured](charts/" + RTTModelChart + ").\n")
	var named []string
	for _, r := range rows {
		if !r.Within {
			named = append(named, fmt.Sprintf("- %d ms, %s (TLS %s): %s.", r.RTTMS, r.Mode, r.TLSVersion, r.Unexplained))
		}
	}
	if len(named) > 0 {
		b.WriteString("\nNot explained within " + fmt.Sprintf("%.0f", netmodel.ResidualLimitMS) + " ms:\n\n" + strings.Join(named, "\n") + "\n")
	}
}
