package vendormock

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// ErrRTTNotApplied is returned (wrapped) by SelfCheck when a probe's round
// trip is below the RTT that SetRTT should have added: a latency toxic that
// is silently not applied must not produce numbers.
var ErrRTTNotApplied = errors.New("latency toxic not applied")

// Names of the two latency toxics SetRTT manages on the vendor proxy.
const (
	ToxicLatencyDown = "latency_downstream" // nginx -> client
	ToxicLatencyUp   = "latency_upstream"   // client -> nginx
)

// SplitRTT splits a round trip of rttMS into Toxiproxy latencies in whole
// ms: rttMS/2 downstream and the rest upstream (3 -> 1 down + 2 up). The
// latency toxic acts on one direction and takes whole milliseconds
// (docs/environment.md#toxiproxy).
func SplitRTT(rttMS int) (downMS, upMS int) {
	return rttMS / 2, rttMS - rttMS/2
}

// ToxicHandshake is the name of the handshake toxic SetRTT adds on the
// vendor proxy's upstream stream when WithTCPHandshake(true) is given.
const ToxicHandshake = "handshake_upstream"

// HandshakeToxicType is the type name of the handshake toxic, which the
// lab's Toxiproxy server (vendormock/images/toxiproxy/server) registers and
// stock Toxiproxy lacks: it holds a new connection's first upstream data
// until rtt_ms (attribute, whole ms) after the connection was accepted, so
// a new connection costs the TCP handshake's round trip.
const HandshakeToxicType = "handshake"

// RTTOption is an option of SetRTT.
type RTTOption func(*rttConfig)

type rttConfig struct{ tcpHandshake bool }

// WithTCPHandshake makes a new connection through the vendor proxy cost
// one more RTT, as SYN / SYN-ACK does on a real link (default off: stock
// Toxiproxy delays data only, as in the case's own conditions; see
// docs/environment.md). On: SetRTT adds the handshake toxic with rtt_ms =
// the RTT ahead of the latency toxics, so the latency adds to the hold.
func WithTCPHandshake(on bool) RTTOption {
	return func(c *rttConfig) { c.tcpHandshake = on }
}

// SetRTT replaces the vendor proxy's toxics so a round trip through
// Toxiproxy costs rttMS: latency rttMS/2 downstream and the rest upstream
// (whole ms); with WithTCPHandshake(true) also the handshake toxic, so a
// new connection's first byte waits one RTT more. 0 removes them all.
// Without the handshake toxic Toxiproxy delays data, not the TCP
// handshake, so a new connection costs one RTT less than on a real
// network (docs/environment.md). The toxics apply to connections opened
// after the call. Errors: rttMS < 0, the Toxiproxy API failing (for the
// handshake toxic, most likely an image built without it: rerun
// vendormock/images/ensure-images.sh).
func (s *Stack) SetRTT(ctx context.Context, rttMS int, opts ...RTTOption) error {
	var cfg rttConfig
	for _, o := range opts {
		o(&cfg)
	}
	if rttMS < 0 {
		return fmt.Errorf("set rtt: negative rtt %d ms", rttMS)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("set rtt: %w", err)
	}
	existing, err := s.proxy.Toxics()
	if err != nil {
		return fmt.Errorf("set rtt: list toxics: %w", err)
	}
	for _, t := range existing {
		if t.Name == ToxicLatencyDown || t.Name == ToxicLatencyUp || t.Name == ToxicHandshake {
			if err := s.proxy.RemoveToxic(t.Name); err != nil {
				return fmt.Errorf("set rtt: remove %s: %w", t.Name, err)
			}
		}
	}
	if rttMS == 0 {
		s.logf("rtt 0 ms: latency and handshake toxics removed")
		return nil
	}
	handshake := "off"
	if cfg.tcpHandshake {
		// First in the upstream chain: the hold, then the latency.
		if _, err := s.proxy.AddToxic(ToxicHandshake, HandshakeToxicType, "upstream", 1.0,
			toxiproxy.Attributes{"rtt_ms": rttMS}); err != nil {
			return fmt.Errorf("set rtt: add %s (type %s, needs the lab's Toxiproxy image: rerun vendormock/images/ensure-images.sh): %w",
				ToxicHandshake, HandshakeToxicType, err)
		}
		handshake = fmt.Sprintf("on (%d ms)", rttMS)
	}
	down, up := SplitRTT(rttMS)
	if err := addLatencyToxics(s.proxy, rttMS); err != nil {
		return fmt.Errorf("set rtt: %w", err)
	}
	s.logf("rtt %d ms: latency %d ms downstream + %d ms upstream, tcp handshake %s", rttMS, down, up, handshake)
	return nil
}

// Proxy returns the Toxiproxy proxy carrying vendor traffic (ProxyName),
// for fault scenarios that add their own toxics (reset_peer, timeout,
// limit_data). SetRTT owns the toxics named ToxicLatencyDown/Up and
// ToxicHandshake.
func (s *Stack) Proxy() *toxiproxy.Proxy { return s.proxy }

// SelfCheck sends a probe through Toxiproxy on an established TLS connection
// and returns its round trip; it errors when the round trip is below rttMS
// (a toxic silently not applied must not produce numbers).
// From the host it dials VendorAddrHost with TLS (ServerName VendorHost,
// the run's CA), sends one warm request to ProbePath, then times a second
// request on the same connection: one HTTP round trip, no connect and no
// handshake. Errors wrap ErrRTTNotApplied when the round trip is short.
func (s *Stack) SelfCheck(ctx context.Context, rttMS int) (time.Duration, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	rt, err := s.probeOnce(ctx)
	if err != nil {
		return 0, fmt.Errorf("self-check: %w", err)
	}
	if want := time.Duration(rttMS) * time.Millisecond; rt < want {
		return rt, fmt.Errorf("self-check: %w: probe round trip %s < rtt %d ms", ErrRTTNotApplied, rt, rttMS)
	}
	s.logf("self-check: probe round trip %.2f ms at rtt %d ms", float64(rt.Microseconds())/1000, rttMS)
	return rt, nil
}

// probeOnce opens one connection to the vendor through Toxiproxy (TLS
// unless SchemeHTTP), sends a warm probe, and returns the round trip of a
// second probe on the same connection.
func (s *Stack) probeOnce(ctx context.Context) (time.Duration, error) {
	rts, err := s.ProbeRoundTrips(ctx, 1)
	if err != nil {
		return 0, err
	}
	return rts[0], nil
}

// ProbeRoundTrips opens one connection to the vendor through Toxiproxy
// from the host (TLS unless SchemeHTTP), sends a warm probe, then times n
// more probes on the same connection, one after the other: n HTTP round
// trips with no connect and no handshake, each Toxiproxy's latency plus
// its forwarding, the host's path to it (Docker's port publishing) and
// nginx answering ProbePath itself. Errors: n < 1, dial, write or read
// failures, an answer other than 204 or a closed connection.
func (s *Stack) ProbeRoundTrips(ctx context.Context, n int) ([]time.Duration, error) {
	if n < 1 {
		return nil, fmt.Errorf("probe round trips: n %d: want >= 1", n)
	}
	var conn net.Conn
	var err error
	if s.Scheme.TLS() {
		d := &tls.Dialer{Config: s.HostTLSConfig()}
		conn, err = d.DialContext(ctx, "tcp", s.VendorAddrHost)
	} else {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", s.VendorAddrHost)
	}
	if err != nil {
		return nil, fmt.Errorf("dial vendor through toxiproxy: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	br := bufio.NewReader(conn)
	req := "GET " + ProbePath + " HTTP/1.1\r\nHost: " + s.VendorHost + "\r\nUser-Agent: vendormock-selfcheck\r\n\r\n"
	probe := func() (time.Duration, error) {
		start := time.Now()
		if _, err := io.WriteString(conn, req); err != nil {
			return 0, fmt.Errorf("write probe: %w", err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, fmt.Errorf("read probe response: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		rt := time.Since(start)
		if resp.StatusCode != http.StatusNoContent {
			return 0, fmt.Errorf("probe: status %d, want 204", resp.StatusCode)
		}
		if resp.Close || strings.EqualFold(resp.Header.Get("Connection"), "close") {
			return 0, errors.New("probe: server closed the connection after one request (keep-alive off?)")
		}
		return rt, nil
	}
	if _, err := probe(); err != nil {
		return nil, err
	}
	rts := make([]time.Duration, 0, n)
	for range n {
		rt, err := probe()
		if err != nil {
			return nil, err
		}
		rts = append(rts, rt)
	}
	return rts, nil
}

// addLatencyToxics adds the latency toxics of one RTT to p: SplitRTT's
// downstream and upstream halves as ToxicLatencyDown and ToxicLatencyUp, no
// jitter; a zero half adds nothing.
func addLatencyToxics(p *toxiproxy.Proxy, rttMS int) error {
	down, up := SplitRTT(rttMS)
	for _, t := range []struct {
		name, stream string
		ms           int
	}{{ToxicLatencyDown, "downstream", down}, {ToxicLatencyUp, "upstream", up}} {
		if t.ms == 0 {
			continue
		}
		if _, err := p.AddToxic(t.name, "latency", t.stream, 1.0, toxiproxy.Attributes{"latency": t.ms, "jitter": 0}); err != nil {
			return fmt.Errorf("add %s: %w", t.name, err)
		}
	}
	return nil
}
