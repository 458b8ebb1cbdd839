package vendorapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"testing"
	"time"
)

// TestSharedClosingTransportSettings: one transport for every call, keep-
// alive on (so no "Connection: close" is added), and a negative
// MaxIdleConnsPerHost, which net/http reads as "never pool".
func TestSharedClosingTransportSettings(t *testing.T) {
	s := NewSharedClosing(Config{MaxTLSVersion: tls.VersionTLS12})
	defer s.Close()
	tr := s.transport
	if tr.DisableKeepAlives {
		t.Error("DisableKeepAlives is set: every request would carry Connection: close, which Ktor CIO did not send")
	}
	if tr.MaxIdleConnsPerHost >= 0 {
		t.Errorf("MaxIdleConnsPerHost = %d, want negative (never pool)", tr.MaxIdleConnsPerHost)
	}
	if got := tr.TLSClientConfig.MaxVersion; got != tls.VersionTLS12 {
		t.Errorf("MaxVersion %s, want TLS 1.2 (the case's engine)", tls.VersionName(got))
	}
	c1, _, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	c2, _, _ := s.Client()
	if c1 != c2 {
		t.Error("two calls got two clients: the strategy shares one")
	}
}

// TestSharedClosingNewConnectionPerCall: one shared client, yet the token
// call and every send each open a connection of their own, the client
// closes each one (the server sees them all closed), and no request
// carries "Connection: close".
func TestSharedClosingNewConnectionPerCall(t *testing.T) {
	const sends = 5
	v := startVendor(t)
	d := &dialer{route: to(v.addr())}
	cfg := baseConfig(t, d)
	cfg.MaxTLSVersion = tls.VersionTLS12
	c := NewClient("https://"+vendorHost, testCreds, NewSharedClosing(cfg))
	defer c.Close()
	for i := range sends {
		res, err := c.Send(context.Background(), note(fmt.Sprintf("ref-%d", i)))
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if tr := res.Trace; tr.Reused || tr.TLSHandshakeMS <= 0 || tr.TLSVersion != "TLS 1.2" {
			t.Errorf("send %d trace %+v: want a fresh TLS 1.2 connection", i, tr)
		}
	}
	if got := v.connsNew.Load(); got != sends+1 {
		t.Errorf("server accepted %d connections, want %d (token + one per send)", got, sends+1)
	}
	waitFor(t, 2*time.Second, "the server to see every connection closed", func() bool {
		return v.connsClosed.Load() == v.connsNew.Load()
	})
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, r := range v.requests {
		if r.Close || r.Header.Get("Connection") != "" {
			t.Errorf("send %d carried Connection: %q (Close %v), want no header", i, r.Header.Get("Connection"), r.Close)
		}
	}
}

// TestSharedClosingNegativeControl: the same transport with the pool size
// put back to 1 reuses the connection, so the negative pool size is what
// closes each one.
func TestSharedClosingNegativeControl(t *testing.T) {
	v := startVendor(t)
	d := &dialer{route: to(v.addr())}
	s := NewSharedClosing(baseConfig(t, d))
	s.transport.MaxIdleConnsPerHost = 1
	c := NewClient("https://"+vendorHost, testCreds, s)
	defer c.Close()
	for i := range 3 {
		if _, err := c.Send(context.Background(), note(fmt.Sprintf("ref-%d", i))); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if got := v.connsNew.Load(); got != 1 {
		t.Errorf("with a pool of 1 the server accepted %d connections, want 1", got)
	}
}
