package vendorapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

func TestStrategies(t *testing.T) {
	m := Strategies()
	if len(m) != 4 {
		t.Fatalf("%d strategies, want 4", len(m))
	}
	for _, name := range []string{PerRequestName, PerRequestResumeName, PooledName, SharedClosingName} {
		mk, ok := m[name]
		if !ok {
			t.Fatalf("no strategy %q", name)
		}
		s := mk(Config{})
		if s.Name() != name {
			t.Errorf("strategy %q names itself %q", name, s.Name())
		}
		s.Close()
	}
	delete(m, PooledName)
	if _, ok := Strategies()[PooledName]; !ok {
		t.Error("Strategies returned a shared map: a delete leaked into the next call")
	}
}

// TestPerRequestNewConnectionPerSend: the token call and every send each
// open a TCP connection with a full TLS 1.2 handshake (capped although the
// server speaks 1.3), and release closes every one of them: the server sees
// all closed and no client goroutine outlives the sends.
func TestPerRequestNewConnectionPerSend(t *testing.T) {
	const sends = 5
	v := startVendor(t) // TLS 1.2 and 1.3
	d := &dialer{route: to(v.addr())}
	cfg := baseConfig(t, d)
	cfg.MaxTLSVersion = tls.VersionTLS12
	s := NewPerRequest(cfg)
	c := NewClient("https://"+vendorHost, testCreds, s)
	before := goleak.IgnoreCurrent()

	for i := range sends {
		res, err := c.Send(context.Background(), note(fmt.Sprintf("ref-%d", i)))
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		tr := res.Trace
		if tr.Reused || tr.GotConns != 1 || tr.TLSVersion != "TLS 1.2" || tr.ConnectMS <= 0 || tr.TLSHandshakeMS <= 0 {
			t.Errorf("send %d trace %+v: want a fresh TLS 1.2 connection with connect and handshake times", i, tr)
		}
	}
	if got := v.connsNew.Load(); got != sends+1 {
		t.Errorf("server accepted %d connections, want %d (token + one per send)", got, sends+1)
	}
	if got := d.n.Load(); got != sends+1 {
		t.Errorf("%d dials, want %d", got, sends+1)
	}
	v.mu.Lock()
	for i, ver := range v.tlsVers {
		if ver != tls.VersionTLS12 {
			t.Errorf("request %d negotiated %s, want TLS 1.2", i, tls.VersionName(ver))
		}
	}
	v.mu.Unlock()
	waitFor(t, 2*time.Second, "the server to see every connection closed", func() bool {
		return v.connsClosed.Load() == v.connsNew.Load()
	})
	if err := goleak.Find(before); err != nil {
		t.Errorf("per-request left goroutines behind: %v", err)
	}
	c.Close()
}

// TestPooledReusesOneConnection: token call and every send share one
// keep-alive connection, negotiated once at TLS 1.3.
func TestPooledReusesOneConnection(t *testing.T) {
	const sends = 5
	v := startVendor(t)
	d := &dialer{route: to(v.addr())}
	c := newTestClient(t, PooledName, baseConfig(t, d))
	for i := range sends {
		res, err := c.Send(context.Background(), note(fmt.Sprintf("ref-%d", i)))
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		tr := res.Trace
		if !tr.Reused || tr.ConnectMS != 0 || tr.TLSHandshakeMS != 0 || tr.TLSVersion != "TLS 1.3" {
			t.Errorf("send %d trace %+v: want the token call's TLS 1.3 connection reused", i, tr)
		}
	}
	if got := v.connsNew.Load(); got != 1 {
		t.Errorf("server accepted %d connections, want 1", got)
	}
	if got := v.tokenCalls.Load(); got != 1 {
		t.Errorf("%d token calls, want 1", got)
	}
}

// TestPooledIdleTimeout: a connection idle for IdleConnTimeout is closed by
// the client (before the server's keep-alive timeout would), and the next
// send dials anew.
func TestPooledIdleTimeout(t *testing.T) {
	v := startVendor(t)
	d := &dialer{route: to(v.addr())}
	cfg := baseConfig(t, d)
	cfg.IdleConnTimeout = 100 * time.Millisecond
	c := newTestClient(t, PooledName, cfg)
	if _, err := c.Send(context.Background(), note("ref-1")); err != nil {
		t.Fatalf("send 1: %v", err)
	}
	waitFor(t, 2*time.Second, "the idle connection to be closed", func() bool { return v.connsClosed.Load() == 1 })
	res, err := c.Send(context.Background(), note("ref-2"))
	if err != nil {
		t.Fatalf("send 2: %v", err)
	}
	if res.Trace.Reused || v.connsNew.Load() != 2 {
		t.Errorf("reused %v with %d connections: want a new connection after the idle timeout", res.Trace.Reused, v.connsNew.Load())
	}
}

// TestHTTP1Only: against a server that offers h2 by ALPN, both strategies
// speak HTTP/1.1.
func TestHTTP1Only(t *testing.T) {
	for _, name := range []string{PerRequestName, PerRequestResumeName, PooledName} {
		t.Run(name, func(t *testing.T) {
			v := startVendor(t, withHTTP2())
			c := newTestClient(t, name, baseConfig(t, &dialer{route: to(v.addr())}))
			if _, err := c.Send(context.Background(), note("ref-h1")); err != nil {
				t.Fatalf("Send: %v", err)
			}
			v.mu.Lock()
			defer v.mu.Unlock()
			if len(v.protos) != 2 {
				t.Fatalf("%d requests, want 2", len(v.protos))
			}
			for i, p := range v.protos {
				if p != 1 {
					t.Errorf("request %d spoke HTTP/%d, want HTTP/1.1", i, p)
				}
			}
		})
	}
}

// TestClosedStrategyNeverDials: a strategy closed before use refuses
// Client() with ErrClientClosed and a Client on it dials nothing.
func TestClosedStrategyNeverDials(t *testing.T) {
	for name, mk := range Strategies() {
		t.Run(name, func(t *testing.T) {
			d := &dialer{route: to(closedAddr(t))}
			s := mk(baseConfig(t, d))
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			hc, release, err := s.Client()
			if hc != nil || release == nil || !errors.Is(err, ErrClientClosed) {
				t.Fatalf("Client() = %v, %v: want nil, a no-op release, ErrClientClosed", hc, err)
			}
			release()
			_, err = NewClient("https://"+vendorHost, testCreds, s).Send(context.Background(), note("ref-closed"))
			se := asSendError(t, err)
			if se.Class != outcome.NotSent || se.Reason != ReasonClosed || !errors.Is(err, ErrClientClosed) {
				t.Errorf("got %v, want NOT_SENT closed", se)
			}
			if d.n.Load() != 0 {
				t.Errorf("dialled %d times", d.n.Load())
			}
		})
	}
}

// TestServerName: the default dialer reaches the server by IP; the
// certificate names only vendorHost, so verification needs ServerName.
func TestServerName(t *testing.T) {
	cases := []struct {
		name       string
		serverName string
		wantClass  outcome.Outcome
	}{
		{"ServerName set: verified", vendorHost, outcome.Sent},
		{"ServerName unset: hostname mismatch, NOT_SENT", "", outcome.NotSent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := startVendor(t)
			lab, _ := pkis(t)
			cfg := Config{RootCAs: lab.pool, ServerName: tc.serverName}
			c := NewClient("https://"+v.addr(), testCreds, NewPooled(cfg))
			defer c.Close()
			_, err := c.Send(context.Background(), note("ref-sni"))
			if got := ClassOf(err); got != tc.wantClass {
				t.Fatalf("class %s, want %s (%v)", got, tc.wantClass, err)
			}
			if err != nil {
				se := asSendError(t, err)
				if _, ok := errors.AsType[x509.HostnameError](err); !ok || se.Reason != ReasonTLS {
					t.Errorf("got %v (reason %s), want an x509.HostnameError, reason tls", se, se.Reason)
				}
			}
		})
	}
}

// TestDialTimeoutBoundsOverride: Config.DialTimeout applies to a Dial
// override too.
func TestDialTimeoutBoundsOverride(t *testing.T) {
	cfg := Config{DialTimeout: 50 * time.Millisecond, ResponseTimeout: 5 * time.Second}
	cfg.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
		select {
		case <-ctx.Done():
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: ctx.Err()}
		case <-time.After(5 * time.Second):
			return nil, errors.New("dial override was not bounded by DialTimeout")
		}
	}
	c := NewClient("https://"+vendorHost, testCreds, NewPerRequest(cfg))
	defer c.Close()
	_, err := c.Send(context.Background(), note("ref-dial"))
	se := asSendError(t, err)
	if se.Class != outcome.NotSent || se.Reason != ReasonDial || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want NOT_SENT dial with DeadlineExceeded", se)
	}
}
