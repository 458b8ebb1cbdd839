package vendorapi

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// h2Config is baseConfig speaking HTTP/2 to addr.
func h2Config(t testing.TB, addr string) Config {
	cfg := baseConfig(t, &dialer{route: to(addr)})
	cfg.HTTPVersion = HTTP2
	return cfg
}

// TestHTTP2StreamFaults holds the client to RFC 9113 8.7 against a raw h2
// server, for both strategies: a POST the server may have processed (it
// read the whole body, then reset the stream with PROTOCOL_ERROR) is never
// sent again and is UNKNOWN; a POST the server provably did not process
// (above a GOAWAY's last-stream-id, or refused with REFUSED_STREAM) may be
// retried by the transport, and is then SENT with the vendor having
// processed it exactly once.
func TestHTTP2StreamFaults(t *testing.T) {
	cases := []struct {
		name          string
		fault         h2Fault
		wantClass     outcome.Outcome
		wantBodies    int // message bodies of the refkey the server read
		wantProcessed int // of which it processed
	}{
		{"RST_STREAM(PROTOCOL_ERROR) after the body: read once, UNKNOWN", h2ResetProtocol, outcome.Unknown, 1, 1},
		{"GOAWAY below the stream: retried, processed once, SENT", h2GoAwayBelow, outcome.Sent, 2, 1},
		{"RST_STREAM(REFUSED_STREAM): retried, processed once, SENT", h2RefuseStream, outcome.Sent, 2, 1},
	}
	for _, strategy := range []string{PooledName, PerRequestName} {
		for _, tc := range cases {
			t.Run(strategy+"/"+tc.name, func(t *testing.T) {
				s := startH2(t, tc.fault)
				c := newTestClient(t, strategy, h2Config(t, s.addr()))
				res, err := c.Send(context.Background(), note("ref-h2"))
				if got := ClassOf(err); got != tc.wantClass {
					t.Errorf("class %s, want %s (err %v, trace %+v)", got, tc.wantClass, err, res.Trace)
				}
				bodies, processed := s.counts("ref-h2")
				if bodies != tc.wantBodies || processed != tc.wantProcessed {
					t.Errorf("server read %d bodies and processed %d, want %d and %d", bodies, processed, tc.wantBodies, tc.wantProcessed)
				}
				if tc.wantClass == outcome.Sent && res.Trace.Proto != "HTTP/2.0" {
					t.Errorf("Proto %q, want HTTP/2.0", res.Trace.Proto)
				}
				if !res.Trace.WriteStarted {
					t.Error("Trace.WriteStarted false, but the request was written")
				}
			})
		}
	}
}

// TestCanceledAfterWriteIsUnknown: a caller's context canceled after the
// request reached the server is UNKNOWN (reason canceled), never NOT_SENT,
// over HTTP/1.1 and HTTP/2.
func TestCanceledAfterWriteIsUnknown(t *testing.T) {
	for _, strategy := range []string{PooledName, PerRequestName} {
		t.Run(strategy+"/HTTP2", func(t *testing.T) {
			s := startH2(t, h2Hang)
			c := newTestClient(t, strategy, h2Config(t, s.addr()))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				select {
				case <-s.gotBody:
					cancel()
				case <-time.After(5 * time.Second):
				}
			}()
			_, err := c.Send(ctx, note("ref-cancel"))
			checkCanceledUnknown(t, err)
			if bodies, _ := s.counts("ref-cancel"); bodies != 1 {
				t.Errorf("server read %d bodies, want 1", bodies)
			}
		})
		t.Run(strategy+"/HTTP1", func(t *testing.T) {
			v := startVendor(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			arrived := make(chan struct{})
			v.onMessage = func(_ http.ResponseWriter, r *http.Request, _ int64) {
				close(arrived)
				// Answer nothing, even after the client goes: a 200 written
				// once the server sees the client's close_notify can beat
				// the client's own close on a loaded machine, and the
				// canceled send then reads it (reason body, not canceled).
				<-r.Context().Done()
				panic(http.ErrAbortHandler)
			}
			go func() {
				select {
				case <-arrived:
					cancel()
				case <-time.After(5 * time.Second):
				}
			}()
			c := newTestClient(t, strategy, baseConfig(t, &dialer{route: to(v.addr())}))
			_, err := c.Send(ctx, note("ref-cancel"))
			checkCanceledUnknown(t, err)
			if got := v.messageCalls.Load(); got != 1 {
				t.Errorf("vendor saw %d message calls, want 1", got)
			}
		})
	}
}

func checkCanceledUnknown(t *testing.T, err error) {
	t.Helper()
	if got := ClassOf(err); got != outcome.Unknown {
		t.Fatalf("class %s, want UNKNOWN (err %v)", got, err)
	}
	if se := asSendError(t, err); se.Reason != ReasonCanceled {
		t.Errorf("reason %s, want canceled", se.Reason)
	}
}

// TestHTTP2ReplayControl is the negative control of TestHTTP2StreamFaults:
// with Config.AllowTransportReplay (the stock transport), the PROTOCOL_ERROR
// reset makes Go's transport send the POST again on a new connection; the
// server reads it twice and Send says SENT. If the raw server or the
// counting were broken, this would not see its duplicate.
func TestHTTP2ReplayControl(t *testing.T) {
	for _, strategy := range []string{PooledName, PerRequestName} {
		t.Run(strategy, func(t *testing.T) {
			s := startH2(t, h2ResetProtocol)
			cfg := h2Config(t, s.addr())
			cfg.AllowTransportReplay = true
			c := newTestClient(t, strategy, cfg)
			res, err := c.Send(context.Background(), note("ref-h2"))
			if err != nil {
				t.Fatalf("stock transport: err %v, want nil (the replay answered)", err)
			}
			if bodies, _ := s.counts("ref-h2"); bodies != 2 {
				t.Errorf("server read %d bodies, want 2 (the planted replay)", bodies)
			}
			if res.Trace.GotConns != 2 {
				t.Errorf("GotConns %d, want 2", res.Trace.GotConns)
			}
		})
	}
}

// TestReplayFailingBeforeWriteIsUnknown: an attempt that wrote, followed by
// a transport replay that fails before writing (its dial is refused), is
// UNKNOWN: classification counts every attempt, not the last. Run with
// AllowTransportReplay, the only way such a replay still happens: HTTP/1.1
// with Idempotency-Key (the server reads the POST on a reused connection
// and closes it) and HTTP/2 (PROTOCOL_ERROR after the body). A classifier
// that looks at the last attempt says NOT_SENT here, and the message is
// sent again.
func TestReplayFailingBeforeWriteIsUnknown(t *testing.T) {
	refused := closedAddr(t)
	t.Run("HTTP1/Idempotency-Key", func(t *testing.T) {
		raw := startRaw(t, func(s *rawServer, c *net.TCPConn) {
			serveHTTP(s, c, func(c *net.TCPConn, _ *tls.Conn, _ *http.Request) bool {
				c.Close()
				return false
			})
		})
		cfg := baseConfig(t, &dialer{route: firstThen(raw.addr(), refused)})
		cfg.AllowTransportReplay = true
		c := newTestClient(t, PooledName, cfg, WithIdempotencyHeader("Idempotency-Key"))
		res, err := c.Send(context.Background(), note("ref-last"))
		if got := ClassOf(err); got != outcome.Unknown {
			t.Errorf("class %s, want UNKNOWN (err %v)", got, err)
		}
		if res.Trace.GotConns != 1 || raw.reqs.Load() != 1 {
			t.Errorf("GotConns %d, %d arrivals: want 1 and 1 (the replay never connected)", res.Trace.GotConns, raw.reqs.Load())
		}
	})
	for _, strategy := range []string{PooledName, PerRequestName} {
		t.Run("HTTP2/"+strategy, func(t *testing.T) {
			s := startH2(t, h2ResetProtocol)
			good := int64(1) // pooled: token and send share dial 1
			if strategy == PerRequestName {
				good = 2
			}
			cfg := h2Config(t, s.addr())
			cfg.Dial = (&dialer{route: func(i int64) string {
				if i <= good {
					return s.addr()
				}
				return refused
			}}).dial
			cfg.AllowTransportReplay = true
			c := newTestClient(t, strategy, cfg)
			_, err := c.Send(context.Background(), note("ref-last"))
			if got := ClassOf(err); got != outcome.Unknown {
				t.Errorf("class %s, want UNKNOWN (err %v)", got, err)
			}
			if bodies, _ := s.counts("ref-last"); bodies != 1 {
				t.Errorf("server read %d bodies, want 1", bodies)
			}
		})
	}
}

// TestTracerCountsEveryAttempt drives the tracer's hooks directly: a first
// attempt that started writing, then a second connection on which nothing
// was written. The request may have left: mayHaveLeft is true and
// Trace.WriteStarted too.
func TestTracerCountsEveryAttempt(t *testing.T) {
	tr := newTracer()
	ct := tr.clientTrace()
	ct.GetConn("api.vendor.test:443")
	ct.WroteHeaderField(":method", []string{"POST"})
	ct.WroteRequest(httptrace.WroteRequestInfo{})
	ct.GetConn("api.vendor.test:443")
	if !tr.mayHaveLeft() {
		t.Error("mayHaveLeft false after an attempt that wrote")
	}
	if !tr.snapshot().WriteStarted {
		t.Error("Trace.WriteStarted false after an attempt that wrote")
	}
	fresh := newTracer()
	fresh.clientTrace().GetConn("api.vendor.test:443")
	if fresh.mayHaveLeft() {
		t.Error("mayHaveLeft true when nothing was written")
	}
}
