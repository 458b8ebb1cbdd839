package vendorapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestTraceInMilliseconds: Trace times are milliseconds. A vendor that
// answers after 40 ms gives TTFBMS and TotalMS of at least 40 and at most
// the wall time of the whole Send.
func TestTraceInMilliseconds(t *testing.T) {
	const delay = 40 * time.Millisecond
	v := startPlainVendor(t)
	v.onMessage = func(w http.ResponseWriter, _ *http.Request, _ int64) {
		time.Sleep(delay)
		fmt.Fprintf(w, `{"code":%q,"messagekey":"mk"}`, SuccessCode)
	}
	c := v.client(t)
	start := time.Now()
	res, err := c.Send(context.Background(), note("ref-ms"))
	wall := float64(time.Since(start)) / float64(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trace
	if tr.TTFBMS < 40 || tr.TotalMS < tr.TTFBMS || tr.TotalMS > wall {
		t.Errorf("TTFBMS %.3f, TotalMS %.3f; want 40 <= TTFBMS <= TotalMS <= %.3f (the Send's wall time in ms)", tr.TTFBMS, tr.TotalMS, wall)
	}
}

// TestTracerTLSVersionOfCompletedHandshake drives the tracer's hooks: a
// completed handshake records its version (before any GotConn); a failed
// one records none.
func TestTracerTLSVersionOfCompletedHandshake(t *testing.T) {
	ok := newTracer()
	ok.clientTrace().TLSHandshakeDone(tls.ConnectionState{Version: tls.VersionTLS13}, nil)
	if got := ok.snapshot().TLSVersion; got != "TLS 1.3" {
		t.Errorf("after a completed TLS 1.3 handshake TLSVersion = %q; want TLS 1.3", got)
	}
	failed := newTracer()
	failed.clientTrace().TLSHandshakeDone(tls.ConnectionState{Version: tls.VersionTLS12}, errors.New("remote error: tls: handshake failure"))
	if got := failed.snapshot().TLSVersion; got != "" {
		t.Errorf("after a failed handshake TLSVersion = %q; want \"\"", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestReplayGuardRefusesRewindAfterProtocolReset: the transport under the
// guard (a registered protocol standing in for the HTTP/2 client) asks
// for a fresh body to send the request again. Before any
// RST_STREAM(PROTOCOL_ERROR) the guard hands the body back (a safe replay
// stays possible); after one arrived on the transport, it refuses with
// ErrReplayRefused (docs/outcomes.md, Automatic replays). A unit test:
// x/net/http2 v0.62.0 (go.mod) no longer replays a POST after a
// PROTOCOL_ERROR reset (its canRetryError takes REFUSED_STREAM only), so
// TestHTTP2StreamFaults passes with or without this refusal; net/http's
// bundled client (Go 1.26) still replays.
func TestReplayGuardRefusesRewindAfterProtocolReset(t *testing.T) {
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	g := &replayGuard{base: base, protocolResets: new(atomic.Int64)}
	var before, after error
	var body []byte
	base.RegisterProtocol("guardtest", roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.GetBody == nil {
			return nil, errors.New("the guard dropped GetBody")
		}
		rc, err := r.GetBody()
		before = err
		if err == nil {
			body, _ = io.ReadAll(rc)
		}
		g.protocolResets.Add(1) // a PROTOCOL_ERROR reset counted by the HTTP/2 client
		_, after = r.GetBody()
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	}))
	req, err := http.NewRequest(http.MethodPost, "guardtest://"+vendorHost+MessagePath, bytes.NewReader([]byte(`{"refkey":"r"}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if before != nil || string(body) != `{"refkey":"r"}` {
		t.Errorf("rewind before any reset: %q, %v; want the body", body, before)
	}
	if !errors.Is(after, ErrReplayRefused) {
		t.Errorf("rewind after a PROTOCOL_ERROR reset: %v; want ErrReplayRefused", after)
	}
}
