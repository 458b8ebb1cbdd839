package scenarios

import (
	"fmt"
	"math"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

// TCP_HANDSHAKE values. "off" is the case's own conditions: stock
// Toxiproxy delays data, not the TCP handshake, so a new connection costs
// one RTT less than on a real network (docs/environment.md). "on" adds the
// handshake toxic, which holds a new connection's first upstream byte until
// one RTT after accept, so connect + first byte costs what SYN / SYN-ACK /
// ACK + data costs on a real link (docs/studies.md, study B, modelled the
// same cost with its own proxy).
const (
	HandshakeOff = "off"
	HandshakeOn  = "on"
)

// handshakeLabel returns the TCP_HANDSHAKE a result was measured with;
// results written before the knob existed used stock Toxiproxy ("off").
func handshakeLabel(r Result) string {
	if r.TCPHandshake == "" {
		return HandshakeOff
	}
	return r.TCPHandshake
}

// TLSRoundTrips returns the round trips a full TLS handshake adds before
// the first request can go: 2 for TLS 1.2, 1 for TLS 1.3 (docs/case.md:
// the old engine's TLS 1.2 handshake cost two extra round trips;
// docs/studies.md, study B: TLS 1.3 costs one). Errors: any other version.
func TLSRoundTrips(version string) (int, error) {
	switch version {
	case "1.2":
		return 2, nil
	case "1.3":
		return 1, nil
	}
	return 0, fmt.Errorf("tls round trips: unknown TLS version %q (want 1.2 or 1.3)", version)
}

// ModelPenaltyRTTs is the per-request client's expected extra cost per send
// over a reused connection, in RTTs: 1 for the TCP handshake when the
// handshake toxic is on (tcpHandshake == HandshakeOn), plus TLSRoundTrips of
// its TLS version. Errors: an unknown TLS version.
func ModelPenaltyRTTs(tlsVersion, tcpHandshake string) (int, error) {
	n, err := TLSRoundTrips(tlsVersion)
	if err != nil {
		return 0, err
	}
	if tcpHandshake == HandshakeOn {
		n++
	}
	return n, nil
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
func Penalties(rs []Result) []Penalty {
	var out []Penalty
	for _, rtt := range rtts(rs) {
		pr, ok1 := find(rs, rtt, vendorapi.PerRequestName)
		po, ok2 := find(rs, rtt, vendorapi.PooledName)
		if !ok1 || !ok2 {
			continue
		}
		tlsV := pr.TLSMax
		if tlsV == "" {
			tlsV = DefaultPerRequestTLS
		}
		hs := handshakeLabel(pr)
		n, err := ModelPenaltyRTTs(tlsV, hs)
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

// SendRoundTrips is the model's round trips per send of a client
// strategy: 1 for pooled (the request on a reused connection), 1 +
// ModelPenaltyRTTs for per-request. Errors: an unknown TLS version.
func SendRoundTrips(mode, tlsVersion, tcpHandshake string) (int, error) {
	if mode == vendorapi.PooledName {
		return 1, nil
	}
	n, err := ModelPenaltyRTTs(tlsVersion, tcpHandshake)
	return n + 1, err
}

// Point budgets: a sweep point's measured sends are capped so they take
// about PointBudget at the model's time per send, and its warm-up so it
// takes about WarmupBudget; never fewer than MinPointCount and
// MinPointWarmup.
const (
	PointBudget    = 60 * time.Second
	WarmupBudget   = 10 * time.Second
	MinPointCount  = 20
	MinPointWarmup = 5
)

// PointCounts returns the measured and warm-up sends of one (mode, RTT)
// point: count and warmup, each capped so the point takes about
// PointBudget (WarmupBudget for warm-up) at the model's floor per send,
// serverDelayMS + SendRoundTrips * rttMS ms, and never below
// MinPointCount / MinPointWarmup (nor above what was asked). At the case's
// settings (3 and 10 ms, COUNT=1000) nothing is capped. Errors: an unknown
// TLS version.
func PointCounts(count, warmup int, mode string, rttMS, serverDelayMS int, tlsVersion, tcpHandshake string) (int, int, error) {
	n, err := SendRoundTrips(mode, tlsVersion, tcpHandshake)
	if err != nil {
		return 0, 0, err
	}
	per := time.Duration(serverDelayMS+n*rttMS) * time.Millisecond
	capAt := func(asked int, budget time.Duration, floor int) int {
		if per <= 0 {
			return asked
		}
		limit := max(int(budget/per), floor)
		return min(asked, limit)
	}
	return capAt(count, PointBudget, MinPointCount), capAt(warmup, WarmupBudget, MinPointWarmup), nil
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
func Project(r Result, bulk int, w window.Window) Projection {
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
func Projections(rs []Result, bulk int, w window.Window) []Projection {
	sorted := append([]Result(nil), rs...)
	SortResults(sorted)
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
