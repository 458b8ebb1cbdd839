package audit

import (
	"fmt"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// ProbeRow is one line of the page's probes table: what a probe measured
// of the client from outside, what its docs state (when anything), and
// how the lab saw it.
type ProbeRow struct {
	Probe    string `json:"probe"`
	Measured string `json:"measured"`
	Stated   string `json:"stated"` // "-" when nothing is stated
	How      string `json:"how"`
}

// probeRows are the probes table's lines for in: a probe that did not
// run says so ("not run: ..."), never a value.
func probeRows(in Inputs) []ProbeRow {
	notRun := "not run in this audit"
	if in.Probes == nil {
		return []ProbeRow{{Probe: "idle timeout", Measured: notRun, Stated: statedIdle(in.Worker, firstRun(in)).String(), How: "-"}}
	}
	for _, e := range in.Probes.Errors {
		notRun = "not run: " + e
	}
	var rows []ProbeRow
	stated := statedFor(in, firstRun(in))
	if m := in.Probes.Idle; m != nil {
		st := stated.String()
		if a := stated.Agrees(*m); a != "" {
			st += ": " + a
		}
		rows = append(rows, ProbeRow{Probe: "idle timeout", Measured: m.Measured(), Stated: st,
			How: fmt.Sprintf("nginx keepalive_timeout %s s during the probe; one send, then one after each pause (%s s; stops at the first new connection); nginx's $connection and $connection_requests: %s",
				fmtS(m.NginxIdleS), joinS(m.GapsS), idleTrail(*m))})
		if f := m.Facts; f != nil {
			rows = append(rows, ProbeRow{Probe: "TLS, ALPN, session resumption, headers, token call", Measured: f.String(), Stated: "-",
				How: "the idle probe's lines in nginx's log: $ssl_protocol, $ssl_alpn_protocol, $ssl_session_reused, $http_connection, $http_idempotency_key, $connection"})
		}
	} else {
		rows = append(rows, ProbeRow{Probe: "idle timeout", Measured: notRun, Stated: stated.String(), How: "-"})
	}
	if m := in.Probes.Burst; m != nil {
		asked := "the image (at its own concurrency)"
		if m.Concurrency > 0 {
			asked = fmt.Sprintf("the worker at concurrency %d", m.Concurrency)
		}
		rows = append(rows, ProbeRow{Probe: "connections under a burst", Measured: m.Measured(), Stated: "-",
			How: fmt.Sprintf("%d messages published at once to %s, WireMock holding each send %s s; nginx's $connection (serial), $connection_requests and $request_time: %s",
				m.Published, asked, fmtS(m.DelayS), m.Trail())})
	} else {
		rows = append(rows, ProbeRow{Probe: "connections under a burst", Measured: notRun, Stated: "-", How: "-"})
	}
	if m := in.Probes.Replay; m != nil {
		for _, l := range m.Lanes {
			rows = append(rows, ProbeRow{Probe: "POST replay (" + l.Lane + ")", Measured: strings.TrimPrefix(l.Measured(), l.Lane+": "), Stated: "-",
				How: fmt.Sprintf("stream-reset proxy in the vendor path (ALPN %s): every %d%s send POST accepted by WireMock, then reset (HTTP/2 RST_STREAM PROTOCOL_ERROR, HTTP/1.1 TCP reset); WireMock's journal per refkey", laneALPN(l.Lane), m.Every, ordinal(m.Every))})
		}
		if m.Skipped != "" {
			rows = append(rows, ProbeRow{Probe: "POST replay (" + LaneVendorH1 + ")", Measured: m.Skipped, Stated: "-", How: "-"})
		}
	} else {
		rows = append(rows, ProbeRow{Probe: "POST replay", Measured: notRun, Stated: "-", How: "-"})
	}
	if m := in.Probes.Response; m != nil {
		rows = append(rows, ProbeRow{Probe: "response timeout", Measured: m.Measured(), Stated: "-",
			How: fmt.Sprintf("WireMock fixed delay %s s on the send; nginx's $status and $request_time of the first send", fmtS(m.DelayS))})
	} else {
		rows = append(rows, ProbeRow{Probe: "response timeout", Measured: notRun, Stated: "-", How: "-"})
	}
	return rows
}

// laneALPN is what the proxy offered by ALPN in a replay lane.
func laneALPN(lane string) string {
	if lane == LaneVendorH1 {
		return "http/1.1 only"
	}
	return "h2, http/1.1"
}

func firstRun(in Inputs) (r results.Result) {
	if runs := in.workerRuns(); len(runs) > 0 {
		return runs[0]
	}
	return r
}

// idleTrail lists the idle probe's sends: "0.06 s reused, 4.02 s new".
func idleTrail(m IdleMeasure) string {
	if len(m.Observations) == 0 {
		return "no send after the first"
	}
	var p []string
	for _, o := range m.Observations {
		w := "new"
		if o.Reused {
			w = "reused"
		}
		p = append(p, fmt.Sprintf("%s s %s", fmtS(o.IdleS), w))
	}
	return strings.Join(p, ", ")
}

func joinS(v []float64) string {
	var p []string
	for _, s := range v {
		p = append(p, fmtS(s))
	}
	return strings.Join(p, ", ")
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

// probesMarkdown is the page's probes section.
func probesMarkdown(b *strings.Builder, rows []ProbeRow) {
	b.WriteString("\n## Probes\n\nWhat the lab measured of the client from outside (nginx's access log, WireMock's journal), on a stack of its own; \"stated\" is what the worker's docs or its library say, shown beside the measure and never judged.\n\n")
	b.WriteString("| probe | measured | stated | how |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdCell(r.Probe), mdCell(r.Measured), mdCell(r.Stated), mdCell(r.How))
	}
}
