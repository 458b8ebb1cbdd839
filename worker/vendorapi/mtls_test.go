package vendorapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// clientPKI is a client CA and a client certificate it signed, made at
// test time; nothing is written to disk.
type clientPKI struct {
	pool *x509.CertPool
	leaf tls.Certificate
}

func newClientPKI(t testing.TB) clientPKI {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("make client pki: %v", err)
		}
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(10), Subject: pkix.Name{CommonName: "client test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(err)
	caCert, err := x509.ParseCertificate(caDER)
	must(err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(11), Subject: pkix.Name{CommonName: "notifier-worker"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	must(err)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return clientPKI{pool: pool, leaf: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}
}

// withClientAuth makes the fake vendor require a client certificate
// issued by pool (mutual TLS): a handshake without one fails.
func withClientAuth(pool *x509.CertPool) vendorOpt {
	return func(_ *fakeVendor, _ *httptest.Server, c *tls.Config) {
		c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, pool
	}
}

// TestMutualTLS: against a vendor that requires a client certificate, a
// client presenting one sends (the control); a client without one is
// refused at the TLS handshake, and the send is NOT_SENT with
// ErrHandshakeRefused and Reason tls, under TLS 1.2 (the handshake itself
// fails) and TLS 1.3 (the alert comes after the client wrote its request),
// for both strategies. Nothing reaches the vendor's handler.
func TestMutualTLS(t *testing.T) {
	cp := newClientPKI(t)
	for _, strategy := range []string{PerRequestName, PooledName} {
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			for _, withCert := range []bool{true, false} {
				name := fmt.Sprintf("%s/%s/client cert %v", strategy, tls.VersionName(ver), withCert)
				t.Run(name, func(t *testing.T) {
					v := startVendor(t, withClientAuth(cp.pool), withServerTLS(ver, ver))
					cfg := baseConfig(t, &dialer{route: to(v.addr())})
					if withCert {
						cfg.ClientCertificates = []tls.Certificate{cp.leaf}
					}
					c := newTestClient(t, strategy, cfg)
					_, err := c.Send(context.Background(), note("ref-mtls"))
					if withCert {
						if err != nil {
							t.Fatalf("Send with a client certificate: %v", err)
						}
						if v.messageCalls.Load() != 1 {
							t.Errorf("%d message calls, want 1", v.messageCalls.Load())
						}
						return
					}
					se := asSendError(t, err)
					if se.Class != outcome.NotSent || se.Reason != ReasonTLS || !errors.Is(err, ErrHandshakeRefused) {
						t.Errorf("Send without a client certificate: %v (class %s reason %s), want NOT_SENT (tls) wrapping ErrHandshakeRefused", err, se.Class, se.Reason)
					}
					if !strings.Contains(err.Error(), "client certificate") {
						t.Errorf("error %q does not say a client certificate is the likely cause", err)
					}
					if n := v.messageCalls.Load() + v.tokenCalls.Load(); n != 0 {
						t.Errorf("%d calls reached the vendor's handler, want 0", n)
					}
				})
			}
		}
	}
}

// TestMutualTLSSendRefusedAfterToken: the token call succeeds on a server
// without client authentication, and the send's new connection goes to one
// that requires it (TLS 1.3): the send itself is refused and is NOT_SENT,
// never UNKNOWN.
func TestMutualTLSSendRefusedAfterToken(t *testing.T) {
	cp := newClientPKI(t)
	open := startVendor(t)
	strict := startVendor(t, withClientAuth(cp.pool), withServerTLS(tls.VersionTLS13, tls.VersionTLS13))
	c := newTestClient(t, PerRequestName, baseConfig(t, &dialer{route: firstThen(open.addr(), strict.addr())}))
	// Whether the request is written before the alert arrives depends on
	// timing; TestClassifyHandshakeRefusal pins the written case.
	_, err := c.Send(context.Background(), note("ref-mtls-send"))
	se := asSendError(t, err)
	if se.Op != OpSend || se.Class != outcome.NotSent || !errors.Is(err, ErrHandshakeRefused) {
		t.Errorf("Send: %v (op %s class %s), want a NOT_SENT send wrapping ErrHandshakeRefused", err, se.Op, se.Class)
	}
	if open.tokenCalls.Load() != 1 || strict.messageCalls.Load() != 0 {
		t.Errorf("token calls %d, message calls at the strict vendor %d; want 1 and 0", open.tokenCalls.Load(), strict.messageCalls.Load())
	}
}

// TestClassifyHandshakeRefusal: a certificate alert on a new connection
// is NOT_SENT even after the request started to be written (the server
// refused the handshake before reading it); the same alert on a reused
// connection, or a reset after the write, stays UNKNOWN (negative
// controls).
func TestClassifyHandshakeRefusal(t *testing.T) {
	refused := fmt.Errorf("post message: %w", &net.OpError{Op: "remote error", Err: tls.AlertError(116)})
	reset := fmt.Errorf("post message: %w", &net.OpError{Op: "read", Err: errors.New("connection reset by peer")})
	tests := []struct {
		name   string
		err    error
		reused bool
		want   outcome.Outcome
	}{
		{"refused on a new connection after the write", refused, false, outcome.NotSent},
		{"same alert on a reused connection", refused, true, outcome.Unknown},
		{"reset after the write", reset, false, outcome.Unknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tracer{gotConns: 1, reused: tc.reused, anyWriteStarted: true}
			se := classifyTransport(OpSend, tc.err, tr)
			if se.Class != tc.want {
				t.Errorf("class %s, want %s (%v)", se.Class, tc.want, se)
			}
			if tc.want == outcome.NotSent && !errors.Is(se, ErrHandshakeRefused) {
				t.Errorf("%v does not wrap ErrHandshakeRefused", se)
			}
		})
	}
}

// TestIsHandshakeRefusal: only certificate and handshake alerts received
// from the server count; an alert this client sent, or a reset, do not.
func TestIsHandshakeRefusal(t *testing.T) {
	remote := func(a tls.AlertError) error {
		return fmt.Errorf("post: %w", &net.OpError{Op: "remote error", Err: a})
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"certificate required", remote(116), true},
		{"bad certificate", remote(42), true},
		{"unknown ca", remote(48), true},
		{"protocol version is not a refusal of the certificate", remote(70), false},
		{"internal error", remote(80), false},
		{"an alert we sent", tls.AlertError(116), false},
		{"plain error", errors.New("tls: certificate required"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsHandshakeRefusal(tc.err); got != tc.want {
				t.Errorf("IsHandshakeRefusal(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestHTTP2PooledSharesOneConnection: with HTTP2, 8 sends at once, three
// times over, share one h2 connection (the token call included) and every
// answer is HTTP/2.0. The control: the same client at HTTP1 against the
// same server speaks HTTP/1.1 and needs more than one connection for 8
// sends at once.
func TestHTTP2PooledSharesOneConnection(t *testing.T) {
	for _, tc := range []struct {
		name      string
		version   HTTPVersion
		wantProto string
	}{
		{"h2", HTTP2, "HTTP/2.0"},
		{"http/1.1 control", HTTP1, "HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := startVendor(t, withHTTP2())
			v.onMessage = func(w http.ResponseWriter, r *http.Request, _ int64) {
				time.Sleep(20 * time.Millisecond) // keep the 8 sends overlapping
				answer(w, http.StatusOK, SuccessCode, r)
			}
			cfg := baseConfig(t, &dialer{route: to(v.addr())})
			cfg.HTTPVersion, cfg.MaxIdleConnsPerHost = tc.version, 8
			c := newTestClient(t, PooledName, cfg)
			for round := range 3 {
				for i, res := range sendAtOnce(t, c, 8, fmt.Sprintf("r%d", round)) {
					if res.Trace.Proto != tc.wantProto {
						t.Errorf("round %d send %d: proto %q, want %q", round, i, res.Trace.Proto, tc.wantProto)
					}
				}
			}
			conns := v.connsNew.Load()
			if tc.version == HTTP2 && conns != 1 {
				t.Errorf("%d connections, want 1 shared h2 connection", conns)
			}
			if tc.version == HTTP1 && (conns < 2 || conns > 8) {
				t.Errorf("%d connections, want 2..8 for 8 HTTP/1.1 sends at once", conns)
			}
		})
	}
}

// TestHTTP2PerRequestOneConnectionPerSend: the per-request strategy with
// HTTP2 still opens one connection (and makes one TLS handshake) per call.
func TestHTTP2PerRequestOneConnectionPerSend(t *testing.T) {
	v := startVendor(t, withHTTP2())
	cfg := baseConfig(t, &dialer{route: to(v.addr())})
	cfg.HTTPVersion = HTTP2
	c := newTestClient(t, PerRequestName, cfg)
	for i := range 4 {
		res, err := c.Send(context.Background(), note(fmt.Sprintf("ref-pr-h2-%d", i)))
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if res.Trace.Proto != "HTTP/2.0" || res.Trace.Reused || res.Trace.TLSHandshakeMS <= 0 {
			t.Errorf("send %d: proto %q reused %v handshake %.3f ms; want HTTP/2.0 on a new connection with a handshake",
				i, res.Trace.Proto, res.Trace.Reused, res.Trace.TLSHandshakeMS)
		}
	}
	if n := v.connsNew.Load(); n != 5 {
		t.Errorf("%d connections, want 5 (1 token call + 4 sends)", n)
	}
}

// TestPoolSizeChurn: 8 sends at once, five times over, on the pooled
// strategy as the worker configures it: an idle pool of 8 capped at 8
// connections keeps at most 8, the token call's included; Go's defaults
// (an idle pool of 2, no cap) close the surplus after each round and open
// new ones (the classic pitfall, docs/studies.md study A).
func TestPoolSizeChurn(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pool, limit int
		check       func(n int64) bool
		want        string
	}{
		{"pool sized from concurrency", 8, 8, func(n int64) bool { return n <= 8 }, "<= 8"},
		{"pool of 2 churns", 2, 0, func(n int64) bool { return n > 8 }, "> 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := startVendor(t)
			v.onMessage = func(w http.ResponseWriter, r *http.Request, _ int64) {
				time.Sleep(20 * time.Millisecond)
				answer(w, http.StatusOK, SuccessCode, r)
			}
			cfg := baseConfig(t, &dialer{route: to(v.addr())})
			cfg.MaxIdleConnsPerHost, cfg.MaxConnsPerHost = tc.pool, tc.limit
			c := newTestClient(t, PooledName, cfg)
			for round := range 5 {
				sendAtOnce(t, c, 8, fmt.Sprintf("churn%d", round))
			}
			if n := v.connsNew.Load(); !tc.check(n) {
				t.Errorf("%d connections for 5 rounds of 8 sends, want %s", n, tc.want)
			}
		})
	}
}

// TestConcurrentSendsOneTokenCall: 8 sends starting at once on a new
// client make one token call between them.
func TestConcurrentSendsOneTokenCall(t *testing.T) {
	v := startVendor(t)
	c := newTestClient(t, PooledName, baseConfig(t, &dialer{route: to(v.addr())}))
	sendAtOnce(t, c, 8, "tok")
	if n := v.tokenCalls.Load(); n != 1 {
		t.Errorf("%d token calls, want 1", n)
	}
	if n := v.messageCalls.Load(); n != 8 {
		t.Errorf("%d message calls, want 8", n)
	}
}

// sendAtOnce starts n Sends together and fails the test on any error.
func sendAtOnce(t *testing.T, c *Client, n int, prefix string) []Result {
	t.Helper()
	out := make([]Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			out[i], errs[i] = c.Send(context.Background(), note(fmt.Sprintf("%s-%d", prefix, i)))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("send %s-%d: %v", prefix, i, err)
		}
	}
	return out
}
