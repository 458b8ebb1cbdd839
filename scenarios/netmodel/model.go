package netmodel

import (
	"fmt"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
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

// DefaultPerRequestTLS is the per-request client's highest TLS version in
// the case (docs/case.md: the old engine spoke TLS 1.2). A per-request
// result without a TLS cap was measured with it.
const DefaultPerRequestTLS = "1.2"

// IdleConnMargin is how much further below nginx's keepalive_timeout
// than one RTT the pooled client's idle timeout sits, so the client
// never reuses a connection nginx is closing (docs/studies.md#idle-race:
// 14-19 resets per 1,000 sends without that gap, 0 with it).
const IdleConnMargin = time.Second

// IdleConnTimeout returns the pooled client's idle timeout for a server
// keepalive_timeout and an RTT in ms: keepalive - RTT - IdleConnMargin
// (docs/studies.md#idle-race). It is <= 0 when keepalive is too short
// (the lab command refuses such a config).
func IdleConnTimeout(keepalive time.Duration, rttMS int) time.Duration {
	return keepalive - time.Duration(rttMS)*time.Millisecond - IdleConnMargin
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

// SendRoundTrips is the model's round trips per send of a client
// strategy: 1 for pooled (the request on a reused connection), 1 +
// ModePenaltyRTTs for per-request-resume, and 1 + ModelPenaltyRTTs for
// per-request and any other mode (a contract worker's). Errors: an
// unknown TLS version.
func SendRoundTrips(mode, tlsVersion, tcpHandshake string) (int, error) {
	switch mode {
	case vendorapi.PooledName:
		return 1, nil
	case vendorapi.PerRequestResumeName:
		n, err := ModePenaltyRTTs(mode, tlsVersion, tcpHandshake)
		return n + 1, err
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
