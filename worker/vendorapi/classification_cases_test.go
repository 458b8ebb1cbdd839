package vendorapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// classificationCases are TestClassification's cases, one per way a send
// can fail, from the earliest (dial) to the latest (an unparsable 2xx body).
// other is a PKI the worker does not trust.
func classificationCases(other testPKI) []faultCase {
	return []faultCase{
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
}
