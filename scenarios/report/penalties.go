package report

import (
	"fmt"
	"math"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// handshakeLabel returns the TCP_HANDSHAKE a result was measured with;
// results written before the knob existed used stock Toxiproxy ("off").
func handshakeLabel(r results.Result) string {
	if r.TCPHandshake == "" {
		return netmodel.HandshakeOff
	}
	return r.TCPHandshake
}

// Penalty is the per-request client's cost over the pooled one at one RTT:
// expected by the round-trip model and measured (per-request p50 - pooled
// p50). RTT-relative fields are NaN at RTT 0.
type Penalty struct {
	RTTMS        int
	TLSVersion   string  // the per-request client's highest TLS version
	TCPHandshake string  // HandshakeOn or HandshakeOff
	ModelRTTs    int     // ModelPenaltyRTTs
	ModelMS      float64 // ModelRTTs * RTTMS, ms
	MeasuredMS   float64 // per-request p50 - pooled p50, ms
	MeasuredRTTs float64 // MeasuredMS / RTTMS; NaN at RTT 0
	// Ratio is per-request p50 / pooled p50 (NaN when pooled p50 is 0).
	Ratio float64
}

// Penalties returns one Penalty per RTT at which rs hold both modes, in RTT
// order. A per-request result without a TLS cap counts as TLS 1.2.
func Penalties(rs []results.Result) []Penalty {
	var out []Penalty
	for _, rtt := range rtts(rs) {
		pr, ok1 := find(rs, rtt, vendorapi.PerRequestName)
		po, ok2 := find(rs, rtt, vendorapi.PooledName)
		if !ok1 || !ok2 {
			continue
		}
		tlsV := pr.TLSMax
		if tlsV == "" {
			tlsV = netmodel.DefaultPerRequestTLS
		}
		hs := handshakeLabel(pr)
		n, err := netmodel.ModelPenaltyRTTs(tlsV, hs)
		if err != nil {
			n = -1
		}
		p := Penalty{RTTMS: rtt, TLSVersion: tlsV, TCPHandshake: hs, ModelRTTs: n,
			ModelMS: float64(n * rtt), MeasuredMS: pr.LatencyMS.P50 - po.LatencyMS.P50,
			MeasuredRTTs: math.NaN(), Ratio: math.NaN()}
		if rtt > 0 {
			p.MeasuredRTTs = p.MeasuredMS / float64(rtt)
		}
		if po.LatencyMS.P50 > 0 {
			p.Ratio = pr.LatencyMS.P50 / po.LatencyMS.P50
		}
		out = append(out, p)
	}
	return out
}

// DefaultBulk is the bulk run BULK projects: the case's question was how
// long an evening bulk of 10,000 messages takes (docs/case.md, "Production
// follow-up").
const DefaultBulk = 10000

// Projection is a calculated (not measured) bulk run of one result: how
// long Bulk back-to-back sends take at the run's p50 and at its measured
// rate, and the latest start in the send window that still ends before it
// closes.
type Projection struct {
	RTTMS       int
	Mode        string
	Bulk        int
	AtP50       time.Duration // Bulk * p50 (as the case projected from its medians)
	AtRate      time.Duration // Bulk * wall_s / measured: includes the worker's own work between sends
	LatestStart string        // "HH:MM:SS" in the window's zone; "" when the bulk does not fit in one window
}

// Project returns the Projection of r for bulk messages in the send window
// w (window.Default: [08:00, 20:50) Asia/Seoul, docs/case.md "Delivery
// rules"). The latest start uses the longer of the two projections.
func Project(r results.Result, bulk int, w window.Window) Projection {
	p := Projection{RTTMS: r.RTTMS, Mode: r.Mode, Bulk: bulk,
		AtP50: time.Duration(float64(bulk) * r.LatencyMS.P50 * float64(time.Millisecond))}
	if r.Measured > 0 && r.WallS > 0 {
		p.AtRate = time.Duration(float64(bulk) * r.WallS / float64(r.Measured) * float64(time.Second))
	}
	p.LatestStart = LatestStart(max(p.AtP50, p.AtRate), w)
	return p
}

// LatestStart returns the latest wall-clock start ("HH:MM:SS" in w's zone)
// from which a run of duration d ends no later than the window's close: the
// close minus d, rounded down to the second. It returns "" when d is longer
// than the window (the run cannot fit in one day's window).
func LatestStart(d time.Duration, w window.Window) string {
	if d > w.End-w.Start {
		return ""
	}
	s := int((w.End - d).Truncate(time.Second) / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// Projections returns Project of every result in rs, in report order.
func Projections(rs []results.Result, bulk int, w window.Window) []Projection {
	sorted := append([]results.Result(nil), rs...)
	results.SortResults(sorted)
	out := make([]Projection, 0, len(sorted))
	for _, r := range sorted {
		out = append(out, Project(r, bulk, w))
	}
	return out
}

// formatDuration renders d as "1 h 02 min 05 s", "4 min 42 s" or "12.3 s".
func formatDuration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		s := int(d.Round(time.Second) / time.Second)
		return fmt.Sprintf("%d h %02d min %02d s", s/3600, s/60%60, s%60)
	case d >= time.Minute:
		s := int(d.Round(time.Second) / time.Second)
		return fmt.Sprintf("%d min %02d s", s/60, s%60)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
