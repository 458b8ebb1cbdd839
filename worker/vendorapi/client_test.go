package vendorapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestIdempotencyHeaderReplay is the header test: a server reads a
// POST on a reused connection and closes it without answering. Exactly one
// request arrives and the send is UNKNOWN, with or without an
// Idempotency-Key / X-Idempotency-Key header (the strategies hide it from
// net/http's replay rule, replayGuard). The negative control,
// Config.AllowTransportReplay, shows what the guard prevents: Go's
// transport replays the POST on a new connection by itself and a second
// one arrives.
func TestIdempotencyHeaderReplay(t *testing.T) {
	cases := []struct {
		name         string
		opts         []Option
		allowReplay  bool
		wantArrivals int64
		wantHeader   string // header the server must see, "" = neither idempotency header
	}{
		{name: "no idempotency header: one request arrives", wantArrivals: 1},
		{name: "Idempotency-Key: not replayed, one arrives", opts: []Option{WithIdempotencyHeader("Idempotency-Key")}, wantArrivals: 1, wantHeader: "Idempotency-Key"},
		{name: "X-Idempotency-Key: not replayed, one arrives", opts: []Option{WithIdempotencyHeader("x-idempotency-key")}, wantArrivals: 1, wantHeader: "X-Idempotency-Key"},
		{name: "control, AllowTransportReplay: Go replays, two arrive", opts: []Option{WithIdempotencyHeader("Idempotency-Key")}, allowReplay: true, wantArrivals: 2, wantHeader: "Idempotency-Key"},
		{name: "correlation header named Idempotency-Key is refused: one arrives", opts: []Option{WithCorrelationHeader("Idempotency-Key")}, wantArrivals: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []http.Header
			raw := startRaw(t, func(s *rawServer, c *net.TCPConn) {
				serveHTTP(s, c, func(c *net.TCPConn, _ *tls.Conn, r *http.Request) bool {
					mu.Lock()
					seen = append(seen, r.Header.Clone())
					mu.Unlock()
					c.Close() // read it, answer nothing
					return false
				})
			})
			d := &dialer{route: to(raw.addr())}
			cfg := baseConfig(t, d)
			cfg.AllowTransportReplay = tc.allowReplay
			c := newTestClient(t, PooledName, cfg, tc.opts...)

			res, err := c.Send(context.Background(), note("ref-idem"))
			if ClassOf(err) != outcome.Unknown {
				t.Fatalf("class %s, want UNKNOWN (err %v)", ClassOf(err), err)
			}
			if got := raw.reqs.Load(); got != tc.wantArrivals {
				t.Errorf("%d requests arrived, want %d", got, tc.wantArrivals)
			}
			if res.Trace.GotConns != int(tc.wantArrivals) {
				t.Errorf("Trace.GotConns = %d, want %d", res.Trace.GotConns, tc.wantArrivals)
			}
			if got := raw.accepts.Load(); got != tc.wantArrivals {
				t.Errorf("%d connections, want %d (the token's, plus one per replay)", got, tc.wantArrivals)
			}
			mu.Lock()
			defer mu.Unlock()
			for i, h := range seen {
				for _, name := range []string{"Idempotency-Key", "X-Idempotency-Key"} {
					has := h.Get(name) != ""
					if want := name == tc.wantHeader; has != want {
						t.Errorf("request %d: header %s present=%v, want %v", i+1, name, has, want)
					}
				}
				if h.Get(DefaultCorrelationHeader) != "ref-idem" {
					t.Errorf("request %d: %s = %q, want the refkey", i+1, DefaultCorrelationHeader, h.Get(DefaultCorrelationHeader))
				}
			}
		})
	}
}

// faultyConn fails every Write with ECONNRESET, writing nothing, once armed:
// a reused connection whose socket is already dead. It stands at the
// socket boundary; everything above it (TLS, net/http) is real.
type faultyConn struct {
	net.Conn
	armed *atomic.Bool
}

func (c *faultyConn) Write(p []byte) (int, error) {
	if c.armed.Load() {
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ECONNRESET)}
	}
	return c.Conn.Write(p)
}

// TestNothingWrittenReplay covers Go's safe replay, which the strategies
// keep: a POST that wrote zero bytes on a reused connection is retried on a
// new one (nothingWrittenError). If it succeeds, SENT once. If that retry
// cannot connect, the send is UNKNOWN: the first attempt's header went into
// the connection's buffer (httptrace WroteHeaderField), which the trace
// cannot tell from a header that went out, and every attempt counts
// (tracer.mayHaveLeft). This case kills the mutant that classifies by the
// last attempt only (NOT_SENT, then sent again).
func TestNothingWrittenReplay(t *testing.T) {
	cases := []struct {
		name      string
		replayTo  func(v *fakeVendor) string
		wantClass outcome.Outcome
		wantCalls int64 // message calls the vendor sees, warm-up included
	}{
		{"replay cannot connect: UNKNOWN", func(*fakeVendor) string { return closedAddr(t) }, outcome.Unknown, 1},
		{"replay succeeds: SENT once", func(v *fakeVendor) string { return v.addr() }, outcome.Sent, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := startVendor(t)
			var armed atomic.Bool
			later := tc.replayTo(v)
			var n atomic.Int64
			cfg := baseConfig(t, &dialer{})
			cfg.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
				var nd net.Dialer
				if n.Add(1) == 1 {
					c, err := nd.DialContext(ctx, network, v.addr())
					if err != nil {
						return nil, err
					}
					return &faultyConn{Conn: c, armed: &armed}, nil
				}
				return nd.DialContext(ctx, network, later)
			}
			c := newTestClient(t, PooledName, cfg)
			if _, err := c.Send(context.Background(), note("warm-up")); err != nil {
				t.Fatalf("warm-up send: %v", err)
			}
			armed.Store(true)
			res, err := c.Send(context.Background(), note("ref-replay"))
			if got := ClassOf(err); got != tc.wantClass {
				t.Fatalf("class %s, want %s (err %v)", got, tc.wantClass, err)
			}
			if !res.Trace.WriteStarted {
				t.Error("Trace.WriteStarted is false: the first attempt did start writing into its buffer")
			}
			if tc.wantClass == outcome.Unknown {
				if se := asSendError(t, err); se.Reason != ReasonDial {
					t.Errorf("reason %s, want dial (the replay's failure)", se.Reason)
				}
			} else if res.Trace.GotConns != 2 || res.Trace.Reused {
				t.Errorf("trace %+v: want 2 GotConns, the last one fresh", res.Trace)
			}
			if got := v.messageCalls.Load(); got != tc.wantCalls {
				t.Errorf("vendor saw %d message calls, want %d", got, tc.wantCalls)
			}
		})
	}
}

// TestRequestShape pins what goes on the wire: the token call's Basic auth,
// and the send's headers and JSON body.
func TestRequestShape(t *testing.T) {
	v := startVendor(t)
	c := newTestClient(t, PooledName, baseConfig(t, &dialer{route: to(v.addr())}))
	n := note("order-123-shipped")
	res, err := c.Send(context.Background(), n)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if res.Code != SuccessCode || res.MessageKey != "mk-order-123-shipped" {
		t.Errorf("result %+v", res)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.tokens) != 1 || v.tokens[0] != testClientID+":"+testSecret {
		t.Errorf("token calls' Basic auth = %v, want one with the credentials", len(v.tokens))
	}
	if len(v.requests) != 1 {
		t.Fatalf("%d message calls, want 1", len(v.requests))
	}
	h := v.requests[0].Header
	want := map[string]string{
		"Authorization":     "Bearer tok-1",
		"Content-Type":      "application/json",
		"X-Refkey":          "order-123-shipped",
		"Idempotency-Key":   "",
		"X-Idempotency-Key": "",
	}
	for k, w := range want {
		if got := h.Get(k); got != w {
			t.Errorf("header %s = %q, want %q", k, got, w)
		}
	}
	var body map[string]any
	if err := json.Unmarshal(v.bodies[0], &body); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	wantBody := map[string]any{
		"refkey": n.RefKey, "recipient": n.Recipient, "template_code": n.TemplateCode,
		"text": n.Text, "category": string(n.Category),
	}
	if !reflect.DeepEqual(body, wantBody) {
		keys := make([]string, 0, len(body))
		for k := range body {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Errorf("body keys %v differ from %v", keys, wantBody)
	}
}

func TestCorrelationHeader(t *testing.T) {
	cases := []struct {
		name     string
		opt      Option
		header   string
		wantSent bool
	}{
		{"custom name", WithCorrelationHeader("X-Request-Ref"), "X-Request-Ref", true},
		{"empty name sends none", WithCorrelationHeader(""), DefaultCorrelationHeader, false},
		{"idempotency name refused, default kept", WithCorrelationHeader("X-Idempotency-Key"), DefaultCorrelationHeader, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := startVendor(t)
			c := newTestClient(t, PooledName, baseConfig(t, &dialer{route: to(v.addr())}), tc.opt)
			if _, err := c.Send(context.Background(), note("ref-corr")); err != nil {
				t.Fatalf("Send: %v", err)
			}
			v.mu.Lock()
			h := v.requests[0].Header
			v.mu.Unlock()
			if got := h.Get(tc.header) == "ref-corr"; got != tc.wantSent {
				t.Errorf("header %s carries the refkey: %v, want %v", tc.header, got, tc.wantSent)
			}
			if h.Get("X-Idempotency-Key") != "" || h.Get("Idempotency-Key") != "" {
				t.Error("an idempotency header was sent")
			}
		})
	}
}

// TestNoSecretsInText checks the secret, token and recipient never show in
// fmt output or error text.
func TestNoSecretsInText(t *testing.T) {
	v := startVendor(t)
	v.onMessage = status(http.StatusBadRequest, `{"code":"3001","description":"bad recipient `+testPhone+`"}`)
	c := newTestClient(t, PooledName, baseConfig(t, &dialer{route: to(v.addr())}))
	_, err := c.Send(context.Background(), note("ref-secret"))
	if err == nil {
		t.Fatal("want a rejection")
	}
	texts := map[string]string{
		"creds %v":  fmt.Sprintf("%v", testCreds),
		"creds %+v": fmt.Sprintf("%+v", testCreds),
		"creds %#v": fmt.Sprintf("%#v", testCreds),
		"client %v": fmt.Sprintf("%v", c),
		//lint:ignore S1025 the test checks what fmt prints through the %s verb
		"client %s": fmt.Sprintf("%s", c),
		"error":     err.Error(),
	}
	for what, s := range texts {
		for _, secret := range []string{testSecret, "tok-1", testPhone} {
			if strings.Contains(s, secret) {
				t.Errorf("%s = %q holds %q", what, s, secret)
			}
		}
	}
	if !strings.Contains(texts["creds %v"], testClientID) {
		t.Errorf("creds %%v = %q, want the client id kept", texts["creds %v"])
	}
}

func TestNewClientBadInput(t *testing.T) {
	cases := []struct {
		name string
		url  string
		s    Strategy
	}{
		{"no scheme", "api.vendor.test", NewPooled(Config{})},
		{"unsupported scheme", "ftp://api.vendor.test", NewPooled(Config{})},
		{"unparsable", "https://api.vendor.test:port/%zz", NewPooled(Config{})},
		{"nil strategy", "https://api.vendor.test", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewClient(tc.url, testCreds, tc.s)
			defer c.Close()
			_, err := c.Send(context.Background(), note("ref-bad"))
			se := asSendError(t, err)
			if se.Class != outcome.NotSent || se.Reason != ReasonRequest {
				t.Errorf("got %s/%s, want NOT_SENT/request (%v)", se.Class, se.Reason, se)
			}
		})
	}
}

// clock is a settable clock for token expiry tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestTokenCacheAndRefresh(t *testing.T) {
	cases := []struct {
		name     string
		lifetime time.Duration
		steps    []time.Duration // clock advance before each send after the first
		want     []int64         // token calls after each send
	}{
		{
			name:     "cached until the refresh margin before expiry",
			lifetime: 10 * time.Minute,
			steps:    []time.Duration{0, 9 * time.Minute, 29 * time.Second, 2 * time.Second},
			want:     []int64{1, 1, 1, 1, 2},
		},
		{
			name:     "short-lived token refreshed at half its life",
			lifetime: 40 * time.Second,
			steps:    []time.Duration{19 * time.Second, 2 * time.Second},
			want:     []int64{1, 1, 2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
			v := startVendor(t)
			v.now, v.tokenLifetime = clk.now, tc.lifetime
			c := newTestClient(t, PooledName, baseConfig(t, &dialer{route: to(v.addr())}), WithClock(clk.now))
			for i, want := range tc.want {
				if i > 0 {
					clk.add(tc.steps[i-1])
				}
				res, err := c.Send(context.Background(), note(fmt.Sprintf("ref-%d", i)))
				if err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
				if got := v.tokenCalls.Load(); got != want {
					t.Errorf("after send %d: %d token calls, want %d", i, got, want)
				}
				fetched := i == 0 || tc.want[i] != tc.want[i-1]
				if res.Trace.TokenFetched != fetched {
					t.Errorf("send %d: TokenFetched = %v, want %v", i, res.Trace.TokenFetched, fetched)
				}
			}
		})
	}
}

// TestCloseDuringUse: a client closed after it was used dials nothing more
// and its pooled connection is closed.
func TestCloseDuringUse(t *testing.T) {
	for _, name := range []string{PerRequestName, PooledName} {
		t.Run(name, func(t *testing.T) {
			v := startVendor(t)
			d := &dialer{route: to(v.addr())}
			c := newTestClient(t, name, baseConfig(t, d))
			if _, err := c.Send(context.Background(), note("ref-1")); err != nil {
				t.Fatalf("Send: %v", err)
			}
			dials := d.n.Load()
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			_, err := c.Send(context.Background(), note("ref-2"))
			if se := asSendError(t, err); se.Class != outcome.NotSent || !errors.Is(se, ErrClientClosed) {
				t.Errorf("got %v, want NOT_SENT with ErrClientClosed", se)
			}
			if d.n.Load() != dials {
				t.Errorf("dialled %d more times after Close", d.n.Load()-dials)
			}
			waitFor(t, 2*time.Second, "every server connection closed", func() bool {
				return v.connsClosed.Load() == v.connsNew.Load()
			})
		})
	}
}
