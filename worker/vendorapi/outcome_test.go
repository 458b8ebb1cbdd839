package vendorapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// rig is one fault case's world: the client under test and the servers
// behind it.
type rig struct {
	c   *Client
	d   *dialer
	v   *fakeVendor // the good vendor (token calls), or nil
	raw *rawServer  // the faulty server, or nil
	dns *fakeDNS
}

// newRig builds a client on strategy whose dials follow route.
func newRig(t *testing.T, strategy string, route func(int64) string, mod func(*Config), opts ...Option) *rig {
	t.Helper()
	d := &dialer{route: route}
	cfg := baseConfig(t, d)
	if mod != nil {
		mod(&cfg)
	}
	return &rig{c: newTestClient(t, strategy, cfg, opts...), d: d}
}

// vendorRig starts a fake vendor and a client pointed at it.
func vendorRig(t *testing.T, strategy string, onMessage func(http.ResponseWriter, *http.Request, int64), mod func(*Config)) *rig {
	t.Helper()
	v := startVendor(t)
	v.onMessage = onMessage
	r := newRig(t, strategy, to(v.addr()), mod)
	r.v = v
	return r
}

// status answers a message call with an HTTP status and a body.
func status(code int, body string) func(http.ResponseWriter, *http.Request, int64) {
	return func(w http.ResponseWriter, _ *http.Request, _ int64) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

type faultCase struct {
	name       string
	setup      func(t *testing.T) *rig
	warm       bool // one successful send first (token cached, connection pooled)
	wantClass  outcome.Outcome
	wantOp     string
	wantReason Reason
	wantCode   string
	check      func(t *testing.T, r *rig, res Result, se *SendError)
}

// TestClassification covers every classification branch, each against a real
// local server doing the fault.
func TestClassification(t *testing.T) {
	lab, other := pkis(t)
	_ = lab
	cases := []faultCase{
		{
			name:      "accepted: 200 with code 1000",
			setup:     func(t *testing.T) *rig { return vendorRig(t, PooledName, nil, nil) },
			wantClass: outcome.Sent, wantCode: SuccessCode,
			check: func(t *testing.T, r *rig, res Result, _ *SendError) {
				if res.MessageKey == "" {
					t.Error("MessageKey is empty")
				}
				if !res.Trace.TokenFetched || !res.Trace.WroteRequest || res.Trace.TTFBMS <= 0 {
					t.Errorf("trace %+v: want token fetched, request written, TTFB > 0", res.Trace)
				}
			},
		},
		{
			name: "connection refused",
			setup: func(t *testing.T) *rig {
				v := startVendor(t)
				r := newRig(t, PerRequestName, firstThen(v.addr(), closedAddr(t)), nil)
				r.v = v
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpSend, wantReason: ReasonDial,
			check: func(t *testing.T, r *rig, res Result, se *SendError) {
				if !errors.Is(se, syscall.ECONNREFUSED) {
					t.Errorf("want ECONNREFUSED in chain, got %v", se)
				}
				if res.Trace.GotConns != 0 {
					t.Errorf("GotConns = %d, want 0", res.Trace.GotConns)
				}
				if n := r.v.messageCalls.Load(); n != 0 {
					t.Errorf("vendor saw %d message calls, want 0", n)
				}
			},
		},
		{
			name: "DNS failure: NXDOMAIN for a name under .invalid",
			setup: func(t *testing.T) *rig {
				v := startVendor(t)
				dns := startDNS(t)
				r := newRig(t, PerRequestName, firstThen(v.addr(), "nonexistent.invalid:443"), nil)
				r.d.resolver = dns.resolver()
				r.v, r.dns = v, dns
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpSend, wantReason: ReasonDNS,
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				de, ok := errors.AsType[*net.DNSError](se)
				if !ok || !de.IsNotFound {
					t.Errorf("want a *net.DNSError with IsNotFound, got %#v", de)
				}
				if r.dns.queries.Load() == 0 {
					t.Error("the fake DNS server got no query: the lookup did not happen")
				}
			},
		},
		{
			name: "TLS handshake failure: unknown CA",
			setup: func(t *testing.T) *rig {
				v := startVendor(t)
				bad := startVendor(t, withCert(other.leaf))
				r := newRig(t, PerRequestName, firstThen(v.addr(), bad.addr()), nil)
				r.v = bad
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpSend, wantReason: ReasonTLS,
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				if _, ok := errors.AsType[x509.UnknownAuthorityError](se); !ok {
					t.Errorf("want x509.UnknownAuthorityError in chain, got %v", se)
				}
				if _, ok := errors.AsType[*tls.CertificateVerificationError](se); !ok {
					t.Errorf("want *tls.CertificateVerificationError in chain, got %v", se)
				}
				if n := r.v.messageCalls.Load(); n != 0 {
					t.Errorf("untrusted server saw %d message calls", n)
				}
			},
		},
		{
			name: "TLS handshake failure: version mismatch (server 1.3 only, client capped at 1.2)",
			setup: func(t *testing.T) *rig {
				v := startVendor(t)
				v13 := startVendor(t, withServerTLS(tls.VersionTLS13, tls.VersionTLS13))
				r := newRig(t, PerRequestName, firstThen(v.addr(), v13.addr()),
					func(c *Config) { c.MaxTLSVersion = tls.VersionTLS12 })
				r.v = v13
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpSend, wantReason: ReasonTLS,
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				op, ok := errors.AsType[*net.OpError](se)
				if !ok || op.Op != "remote error" {
					t.Errorf("want the server's alert as *net.OpError{Op: remote error}, got %#v", op)
				}
				if n := r.v.messageCalls.Load(); n != 0 {
					t.Errorf("TLS 1.3 server saw %d message calls", n)
				}
			},
		},
		{
			name: "TLS handshake failure: silent server, handshake timeout",
			setup: func(t *testing.T) *rig {
				v := startVendor(t)
				silent := startRaw(t, func(_ *rawServer, c *net.TCPConn) { io.Copy(io.Discard, c) })
				r := newRig(t, PerRequestName, firstThen(v.addr(), silent.addr()),
					func(c *Config) { c.TLSHandshakeTimeout = 200 * time.Millisecond })
				r.raw = silent
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpSend, wantReason: ReasonTLS,
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				ne, ok := errors.AsType[net.Error](se)
				if !ok || !ne.Timeout() {
					t.Errorf("want a net.Error with Timeout(), got %v", se)
				}
			},
		},
		{
			name: "client already closed: never dials",
			setup: func(t *testing.T) *rig {
				v := startVendor(t)
				r := newRig(t, PooledName, to(v.addr()), nil)
				r.v = v
				r.c.Close()
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpSend, wantReason: ReasonClosed,
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				if !errors.Is(se, ErrClientClosed) {
					t.Errorf("want ErrClientClosed in chain, got %v", se)
				}
				if n := r.d.n.Load(); n != 0 {
					t.Errorf("dialled %d times after Close, want 0", n)
				}
			},
		},
		{
			name: "token call failed: vendor answers 500",
			setup: func(t *testing.T) *rig {
				r := vendorRig(t, PooledName, nil, nil)
				r.v.tokenStatus = http.StatusInternalServerError
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpToken, wantReason: ReasonStatus, wantCode: "500",
			check: func(t *testing.T, r *rig, res Result, _ *SendError) {
				if n := r.v.messageCalls.Load(); n != 0 {
					t.Errorf("vendor saw %d message calls after a failed token call, want 0", n)
				}
				if !res.Trace.TokenFetched {
					t.Error("Trace.TokenFetched is false")
				}
			},
		},
		{
			name: "token call failed: wrong secret, 401",
			setup: func(t *testing.T) *rig {
				v := startVendor(t)
				d := &dialer{route: to(v.addr())}
				c := NewClient("https://"+vendorHost, Credentials{ClientID: testClientID, ClientSecret: "wrong-" + testSecret}, NewPooled(baseConfig(t, d)))
				t.Cleanup(func() { c.Close() })
				return &rig{c: c, d: d, v: v}
			},
			wantClass: outcome.NotSent, wantOp: OpToken, wantReason: ReasonStatus, wantCode: "401",
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				if strings.Contains(se.Error(), "wrong-"+testSecret) {
					t.Errorf("error text holds the secret: %q", se.Error())
				}
				if n := r.v.tokenCalls.Load(); n != 1 {
					t.Errorf("token calls = %d, want 1 (no retry on a token 401)", n)
				}
			},
		},
		{
			name: "token call failed: unparsable token body",
			setup: func(t *testing.T) *rig {
				r := vendorRig(t, PooledName, nil, nil)
				r.v.tokenBody = `{"accesstoken": 42`
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpToken, wantReason: ReasonBody, wantCode: "200",
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				if !errors.Is(se, ErrBadResponse) {
					t.Errorf("want ErrBadResponse in chain, got %v", se)
				}
			},
		},
		{
			name: "token call failed: token expiry not RFC 3339",
			setup: func(t *testing.T) *rig {
				r := vendorRig(t, PooledName, nil, nil)
				r.v.tokenBody = `{"accesstoken": "abc", "type": "Bearer", "expired": "tomorrow"}`
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpToken, wantReason: ReasonBody, wantCode: "200",
		},
		{
			name: "token call failed: connection refused",
			setup: func(t *testing.T) *rig {
				return newRig(t, PooledName, to(closedAddr(t)), nil)
			},
			wantClass: outcome.NotSent, wantOp: OpToken, wantReason: ReasonDial,
		},
		{
			name: "connection reset before the request was written (during connection setup)",
			setup: func(t *testing.T) *rig {
				v := startVendor(t)
				rst := startRaw(t, func(_ *rawServer, c *net.TCPConn) { reset(c) })
				r := newRig(t, PerRequestName, firstThen(v.addr(), rst.addr()), nil)
				r.raw = rst
				return r
			},
			wantClass: outcome.NotSent, wantOp: OpSend, wantReason: ReasonReset,
			check: func(t *testing.T, r *rig, res Result, se *SendError) {
				if !errors.Is(se, syscall.ECONNRESET) && !errors.Is(se, syscall.EPIPE) {
					t.Errorf("want ECONNRESET or EPIPE in chain, got %v", se)
				}
				if r.raw.accepts.Load() != 1 {
					t.Errorf("faulty server accepted %d connections, want 1", r.raw.accepts.Load())
				}
			},
		},
		{
			name: "connection reset after the request was written",
			setup: func(t *testing.T) *rig {
				raw := startRaw(t, func(s *rawServer, c *net.TCPConn) {
					serveHTTP(s, c, func(c *net.TCPConn, _ *tls.Conn, _ *http.Request) bool { reset(c); return false })
				})
				r := newRig(t, PerRequestName, to(raw.addr()), nil)
				r.raw = raw
				return r
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonReset,
			check: func(t *testing.T, r *rig, res Result, se *SendError) {
				if !errors.Is(se, syscall.ECONNRESET) {
					t.Errorf("want ECONNRESET in chain, got %v", se)
				}
				if !res.Trace.WroteRequest {
					t.Error("Trace.WroteRequest is false, but the server read the whole request")
				}
				if n := r.raw.reqs.Load(); n != 1 {
					t.Errorf("server read %d message requests, want 1", n)
				}
			},
		},
		{
			name: "EOF on a reused connection the server closed as the POST went out",
			setup: func(t *testing.T) *rig {
				raw := startRaw(t, func(s *rawServer, c *net.TCPConn) {
					serveHTTP(s, c, func(c *net.TCPConn, _ *tls.Conn, _ *http.Request) bool { c.Close(); return false })
				})
				r := newRig(t, PooledName, to(raw.addr()), nil)
				r.raw = raw
				return r
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonEOF,
			check: func(t *testing.T, r *rig, res Result, se *SendError) {
				if !errors.Is(se, io.EOF) {
					t.Errorf("want io.EOF in chain, got %v", se)
				}
				if !res.Trace.Reused || res.Trace.GotConns != 1 {
					t.Errorf("trace %+v: want the token call's connection reused, no replay", res.Trace)
				}
				if n, a := r.raw.reqs.Load(), r.raw.accepts.Load(); n != 1 || a != 1 {
					t.Errorf("server read %d message requests on %d connections, want 1 on 1", n, a)
				}
			},
		},
		{
			name: "response timeout after the request was written",
			setup: func(t *testing.T) *rig {
				// Take the connection and never answer; drain it until
				// the client gives up and closes it.
				hold := func(w http.ResponseWriter, _ *http.Request, _ int64) {
					c, _, err := http.NewResponseController(w).Hijack()
					if err != nil {
						panic(err)
					}
					io.Copy(io.Discard, c)
					c.Close()
				}
				return vendorRig(t, PooledName, hold, func(c *Config) { c.ResponseTimeout = 300 * time.Millisecond })
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonTimeout,
			check: func(t *testing.T, r *rig, res Result, se *SendError) {
				if !errors.Is(se, context.DeadlineExceeded) {
					t.Errorf("want context.DeadlineExceeded in chain, got %v", se)
				}
				if !res.Trace.WroteRequest || res.Trace.TTFBMS != 0 {
					t.Errorf("trace %+v: want request written, no response byte", res.Trace)
				}
				if n := r.v.messageCalls.Load(); n != 1 {
					t.Errorf("vendor saw %d message calls, want 1", n)
				}
			},
		},
		{
			name: "502 from a proxy",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusBadGateway, "<html>502 Bad Gateway</html>"), nil)
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonStatus, wantCode: "502",
			check: expectBadStatusOnce,
		},
		{
			name: "504 from a proxy",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusGatewayTimeout, "<html>504 Gateway Time-out</html>"), nil)
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonStatus, wantCode: "504",
			check: expectBadStatusOnce,
		},
		{
			name: "500 from the vendor: may have been processed",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusInternalServerError, ""), nil)
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonStatus, wantCode: "500",
			check: expectBadStatusOnce,
		},
		{
			name: "503 from the vendor",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusServiceUnavailable, ""), nil)
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonStatus, wantCode: "503",
			check: expectBadStatusOnce,
		},
		{
			name: "307 redirect is not followed",
			setup: func(t *testing.T) *rig {
				redirect := func(w http.ResponseWriter, r *http.Request, _ int64) {
					http.Redirect(w, r, "/v3/elsewhere", http.StatusTemporaryRedirect)
				}
				return vendorRig(t, PooledName, redirect, nil)
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonStatus, wantCode: "307",
			check: func(t *testing.T, r *rig, _ Result, _ *SendError) {
				if n, o := r.v.messageCalls.Load(), r.v.otherCalls.Load(); n != 1 || o != 0 {
					t.Errorf("message calls %d, other calls %d: want 1 and 0 (the POST must not be re-sent)", n, o)
				}
			},
		},
		{
			name: "401 once: one token refetch, one retry, SENT",
			setup: func(t *testing.T) *rig {
				once := func(w http.ResponseWriter, r *http.Request, n int64) {
					if n == 1 {
						w.WriteHeader(http.StatusUnauthorized)
						return
					}
					answer(w, http.StatusOK, SuccessCode, r)
				}
				return vendorRig(t, PooledName, once, nil)
			},
			wantClass: outcome.Sent, wantCode: SuccessCode,
			check: func(t *testing.T, r *rig, res Result, _ *SendError) {
				if tc, mc := r.v.tokenCalls.Load(), r.v.messageCalls.Load(); tc != 2 || mc != 2 {
					t.Errorf("token calls %d, message calls %d: want 2 and 2", tc, mc)
				}
				r.v.mu.Lock()
				defer r.v.mu.Unlock()
				if got := strings.Join(r.v.bearers, ","); got != "Bearer tok-1,Bearer tok-2" {
					t.Errorf("bearers = %s, want the second send on the new token", got)
				}
				if !res.Trace.TokenFetched {
					t.Error("Trace.TokenFetched is false")
				}
			},
		},
		{
			name: "401 twice: REJECTED after the one refetch",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusUnauthorized, ""), nil)
			},
			wantClass: outcome.Rejected, wantOp: OpSend, wantReason: ReasonStatus, wantCode: "401",
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				if tc, mc := r.v.tokenCalls.Load(), r.v.messageCalls.Load(); tc != 2 || mc != 2 {
					t.Errorf("token calls %d, message calls %d: want 2 and 2", tc, mc)
				}
				if !errors.Is(se, ErrRejected) {
					t.Errorf("want ErrRejected in chain, got %v", se)
				}
			},
		},
		{
			name: "another 4xx with a business code",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusBadRequest,
					`{"code":"3015","description":"template not found for `+testPhone+`"}`), nil)
			},
			wantClass: outcome.Rejected, wantOp: OpSend, wantReason: ReasonBusiness, wantCode: "3015",
			check: func(t *testing.T, r *rig, res Result, se *SendError) {
				if !strings.HasPrefix(se.Description, "template not found") {
					t.Errorf("Description = %q", se.Description)
				}
				if res.Code != "3015" {
					t.Errorf("Result.Code = %q, want 3015", res.Code)
				}
			},
		},
		{
			name: "another 4xx without a body",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusNotFound, ""), nil)
			},
			wantClass: outcome.Rejected, wantOp: OpSend, wantReason: ReasonStatus, wantCode: "404",
		},
		{
			name: "200 whose business code is not success",
			setup: func(t *testing.T) *rig {
				reject := func(w http.ResponseWriter, r *http.Request, _ int64) { answer(w, http.StatusOK, "3018", r) }
				return vendorRig(t, PooledName, reject, nil)
			},
			wantClass: outcome.Rejected, wantOp: OpSend, wantReason: ReasonBusiness, wantCode: "3018",
		},
		{
			name: "200 with a numeric success code",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusOK, `{"code":1000,"description":"success","messagekey":"m1"}`), nil)
			},
			wantClass: outcome.Sent, wantCode: SuccessCode,
		},
		{
			name: "200 with an unparsable body",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusOK, `<html>maintenance</html>`), nil)
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonBody, wantCode: "200",
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				if !errors.Is(se, ErrBadResponse) {
					t.Errorf("want ErrBadResponse in chain, got %v", se)
				}
			},
		},
		{
			name: "200 JSON without a code",
			setup: func(t *testing.T) *rig {
				return vendorRig(t, PooledName, status(http.StatusOK, `{"result":"ok"}`), nil)
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonBody, wantCode: "200",
		},
		{
			name: "200 whose body is cut short",
			setup: func(t *testing.T) *rig {
				cut := func(w http.ResponseWriter, _ *http.Request, _ int64) {
					c, buf, err := http.NewResponseController(w).Hijack()
					if err != nil {
						panic(err)
					}
					buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"code\":\"1000\"")
					buf.Flush()
					c.Close()
				}
				return vendorRig(t, PooledName, cut, nil)
			},
			wantClass: outcome.Unknown, wantOp: OpSend, wantReason: ReasonEOF, wantCode: "200",
			check: func(t *testing.T, r *rig, _ Result, se *SendError) {
				if !errors.Is(se, io.ErrUnexpectedEOF) {
					t.Errorf("want io.ErrUnexpectedEOF in chain, got %v", se)
				}
			},
		},
		{
			name:      "caller's context canceled before the send",
			warm:      true,
			setup:     func(t *testing.T) *rig { return vendorRig(t, PooledName, nil, nil) },
			wantClass: outcome.NotSent, wantOp: OpSend, wantReason: ReasonCanceled,
			check: func(t *testing.T, r *rig, _ Result, _ *SendError) {
				if n := r.v.messageCalls.Load(); n != 1 {
					t.Errorf("vendor saw %d message calls, want 1 (the warm-up only)", n)
				}
			},
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.setup(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tc.warm {
				if _, err := r.c.Send(ctx, note("warm-up")); err != nil {
					t.Fatalf("warm-up send: %v", err)
				}
			}
			if tc.wantReason == ReasonCanceled {
				var c2 context.CancelFunc
				ctx, c2 = context.WithCancel(ctx)
				c2()
			}
			res, err := r.c.Send(ctx, note("ref-"+strings.ReplaceAll(tc.name, " ", "-")))
			if got := ClassOf(err); got != tc.wantClass {
				t.Fatalf("ClassOf = %s, want %s (err: %v)", got, tc.wantClass, err)
			}
			var se *SendError
			if tc.wantClass == outcome.Sent {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
			} else {
				se = asSendError(t, err)
				if se.Op != tc.wantOp || se.Reason != tc.wantReason {
					t.Errorf("op %q reason %q, want %q %q (err: %v)", se.Op, se.Reason, tc.wantOp, tc.wantReason, err)
				}
				if se.Code != tc.wantCode {
					t.Errorf("Code = %q, want %q", se.Code, tc.wantCode)
				}
				for _, secret := range []string{testSecret, testPhone, "Bearer", "tok-"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error text holds %q: %s", secret, err)
					}
				}
			}
			if tc.wantCode != "" && res.Code != tc.wantCode && tc.wantOp != OpToken {
				t.Errorf("Result.Code = %q, want %q", res.Code, tc.wantCode)
			}
			// The trace and the class must agree: a send NotSent never
			// started to be written; an Unknown one did.
			if se != nil && se.Op == OpSend {
				switch se.Class {
				case outcome.NotSent:
					if res.Trace.WriteStarted {
						t.Errorf("NOT_SENT but Trace.WriteStarted: %+v", res.Trace)
					}
				case outcome.Unknown:
					if !res.Trace.WriteStarted {
						t.Errorf("UNKNOWN but not Trace.WriteStarted: %+v", res.Trace)
					}
				}
			}
			if tc.check != nil {
				tc.check(t, r, res, se)
			}
		})
	}
}

// expectBadStatusOnce checks a 5xx was not retried and is ErrBadStatus.
func expectBadStatusOnce(t *testing.T, r *rig, _ Result, se *SendError) {
	t.Helper()
	if !errors.Is(se, ErrBadStatus) {
		t.Errorf("want ErrBadStatus in chain, got %v", se)
	}
	if n := r.v.messageCalls.Load(); n != 1 {
		t.Errorf("vendor saw %d message calls, want 1 (never re-sent)", n)
	}
}

func TestClassOf(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want outcome.Outcome
	}{
		{"nil is sent", nil, outcome.Sent},
		{"send error", &SendError{Class: outcome.NotSent}, outcome.NotSent},
		{"wrapped send error", fmt.Errorf("handle: %w", &SendError{Class: outcome.Rejected}), outcome.Rejected},
		{"other error is unknown", errors.New("boom"), outcome.Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassOf(tc.err); got != tc.want {
				t.Errorf("ClassOf(%v) = %s, want %s", tc.err, got, tc.want)
			}
		})
	}
}

func TestSendErrorText(t *testing.T) {
	err := &SendError{Class: outcome.Unknown, Op: OpSend, Code: "502", Reason: ReasonStatus, Description: testPhone, Err: ErrBadStatus}
	want := "vendor send: UNKNOWN (status) code 502: unexpected http status"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}
