package vendormock

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ErrHandshakeNotApplied is returned (wrapped) by SelfCheckNewConn when a
// new connection's first response byte came back sooner than 2 RTT while
// the handshake toxic was asked for: a run whose TCP handshake is not
// modelled must not produce numbers.
var ErrHandshakeNotApplied = errors.New("handshake toxic not applied")

// NewConnRTTs is the floor of a new connection's time to its first
// response byte, in RTTs: the client's first byte (its TLS ClientHello)
// costs one round trip to be answered, plus one for the TCP handshake when
// the handshake toxic is on (docs/studies.md, study B: a new call costs
// TCP, then TLS, then the request).
func NewConnRTTs(handshake bool) int {
	if handshake {
		return 2
	}
	return 1
}

// selfCheckConns is how many new connections SelfCheckNewConn times.
const selfCheckConns = 3

// SelfCheckNewConn opens new TCP connections to the vendor through
// Toxiproxy (VendorAddrHost), three one after the other, and returns the
// least time to first response byte:
// from the start of connect() to the first byte the server sends back (its
// TLS ServerHello, answering the ClientHello), after which the TLS
// handshake is completed and verified against the run's CA. It errors,
// wrapping ErrHandshakeNotApplied when handshake is true, or
// ErrRTTNotApplied otherwise, when that time is below NewConnRTTs(handshake)
// * rttMS; and when the connection or the handshake fails. Without a
// deadline on ctx it gives up after 30 s.
func (s *Stack) SelfCheckNewConn(ctx context.Context, rttMS int, handshake bool) (time.Duration, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	var cfg *tls.Config // nil: plain HTTP (SchemeHTTP)
	if s.Scheme.TLS() {
		cfg = s.HostTLSConfig()
	}
	// The least of selfCheckConns new connections: the check is a floor,
	// and one connection can come out a round trip slower than the path
	// (a delayed segment, a busy machine), which would pass a path without
	// the handshake toxic; the fastest of three cannot be slower than the
	// path is.
	var ttfb time.Duration
	for i := range selfCheckConns {
		d, err := firstResponseByte(ctx, s.VendorAddrHost, cfg, s.VendorHost)
		if err != nil {
			return 0, fmt.Errorf("self-check new connection: %w", err)
		}
		if i == 0 || d < ttfb {
			ttfb = d
		}
	}
	n := NewConnRTTs(handshake)
	if want := time.Duration(n*rttMS) * time.Millisecond; ttfb < want {
		sentinel := ErrRTTNotApplied
		if handshake {
			sentinel = ErrHandshakeNotApplied
		}
		return ttfb, fmt.Errorf("self-check new connection: %w: first response byte after %s < %d x rtt %d ms",
			sentinel, ttfb, n, rttMS)
	}
	s.logf("self-check: new connection's first response byte after %.2f ms at rtt %d ms (floor %d RTT)",
		float64(ttfb.Microseconds())/1000, rttMS, n)
	return ttfb, nil
}

// firstResponseByte dials addr, runs a TLS handshake with cfg over the
// connection and returns the time from the dial's start to the first byte
// read from the server. With cfg nil (plain HTTP) the client's first bytes
// are a GET of ProbePath for host, and the first byte is the answer's.
// Errors: dial, handshake or request failures.
func firstResponseByte(ctx context.Context, addr string, cfg *tls.Config, host string) (time.Duration, error) {
	start := time.Now()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("dial vendor through toxiproxy: %w", err)
	}
	fc := &firstReadConn{Conn: raw}
	if cfg == nil {
		defer fc.Close()
		if dl, ok := ctx.Deadline(); ok {
			_ = fc.SetDeadline(dl)
		}
		if _, err := fmt.Fprintf(fc, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", ProbePath, host); err != nil {
			return 0, fmt.Errorf("plain http probe: %w", err)
		}
		if _, err := fc.Read(make([]byte, 1)); err != nil {
			return 0, fmt.Errorf("plain http probe: %w", err)
		}
		return fc.firstRead().Sub(start), nil
	}
	conn := tls.Client(fc, cfg)
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if err := conn.HandshakeContext(ctx); err != nil {
		return 0, fmt.Errorf("tls handshake: %w", err)
	}
	first := fc.firstRead()
	if first.IsZero() {
		return 0, errors.New("tls handshake: done without reading from the server")
	}
	return first.Sub(start), nil
}

// firstReadConn is a net.Conn that remembers when its first Read returned
// data.
type firstReadConn struct {
	net.Conn
	mu    sync.Mutex
	first time.Time
}

// Read reads from the connection and stamps the first read that returns
// data.
func (c *firstReadConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if c.first.IsZero() {
			c.first = time.Now()
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *firstReadConn) firstRead() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.first
}
