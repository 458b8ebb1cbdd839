package vendorapi

import (
	"crypto/tls"
	"net/http/httptrace"
	"sync"
	"time"
)

// Trace is what httptrace saw during one send: the last POST /v3/message
// call of a Send (after a 401 and a token refetch, the retried call), not
// the token call. Times are milliseconds; a phase that did not happen is 0.
// It is filled on error too, up to the point of failure.
type Trace struct {
	// TotalMS is from just before the call to the end of the response
	// body, or to the failure.
	TotalMS float64 `json:"total_ms"`
	// ConnectMS is the TCP connect (ConnectStart to ConnectDone); 0 when
	// the connection was reused.
	ConnectMS float64 `json:"connect_ms"`
	// TLSHandshakeMS is the TLS handshake; 0 when the connection was
	// reused.
	TLSHandshakeMS float64 `json:"tls_handshake_ms"`
	// TTFBMS is from the start of the call (connection setup included) to
	// the first response byte; 0 when no byte came back.
	TTFBMS float64 `json:"ttfb_ms"`
	// Reused says the connection came from the idle pool (keep-alive).
	Reused bool `json:"reused"`
	// TLSVersion is "TLS 1.2" or "TLS 1.3"; "" when no TLS connection was
	// obtained.
	TLSVersion string `json:"tls_version"`
	// TLSResumed says this call's new connection resumed a TLS session
	// (tls.ConnectionState.DidResume after the handshake): only the
	// per-request-resume strategy offers one. False on a reused connection.
	TLSResumed bool `json:"tls_resumed,omitempty"`
	// GotConns counts httptrace GotConn calls. Above 1, net/http gave up
	// on a connection and replayed the request on another one by itself
	// (see the package doc for exactly when it does that to a POST).
	GotConns int `json:"got_conns"`
	// WriteStarted says the transport started to write the request on
	// some connection (the first WroteHeaderField): from then on the
	// request may have reached the vendor. False means not one byte of it
	// left the worker.
	WriteStarted bool `json:"write_started"`
	// WroteRequest says the whole request (headers and body) was written
	// without error (httptrace WroteRequest with a nil Err).
	WroteRequest bool `json:"wrote_request"`
	// Proto is the protocol of the response, "HTTP/1.1" or "HTTP/2.0"
	// (http.Response.Proto); "" when no response came back.
	Proto string `json:"proto,omitempty"`
	// TokenFetched says this Send made a token call first (successful or
	// not): the first send, after expiry, or after a 401.
	TokenFetched bool `json:"token_fetched"`
}

// ms converts a duration to float64 milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// tracer records one call's httptrace events. The transport calls hooks
// from its own goroutines (dialer, write loop), so every field is guarded
// by mu. When http.Client.Do returns an error from an HTTP/1 connection,
// the transport has waited for that connection's write loop to end first
// (persistConn.mapRoundTripError waits on writeLoopDone), so the write
// flags are final when classify reads them.
type tracer struct {
	mu    sync.Mutex
	start time.Time
	end   time.Time

	connectStart time.Time
	connect      time.Duration
	tlsStart     time.Time
	tlsDur       time.Duration
	tlsErr       error // TLSHandshakeDone error of the last handshake
	tlsResumed   bool  // the last handshake resumed a session
	ttfb         time.Duration
	reused       bool
	tlsVersion   uint16
	gotConns     int

	// anyWriteStarted is WriteStarted over every attempt of the call,
	// never reset: an attempt that started writing may have reached the
	// vendor, whatever later attempts do.
	anyWriteStarted bool
	wroteRequest    bool
	proto           string
}

func newTracer() *tracer { return &tracer{start: time.Now()} }

// clientTrace returns the hooks that fill t.
func (t *tracer) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn: func(string) {
			t.mu.Lock()
			t.wroteRequest = false
			t.mu.Unlock()
		},
		GotConn: func(info httptrace.GotConnInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.gotConns++
			t.reused = info.Reused
			if tc, ok := info.Conn.(interface{ ConnectionState() tls.ConnectionState }); ok {
				t.tlsVersion = tc.ConnectionState().Version
			}
		},
		ConnectStart: func(string, string) {
			t.mu.Lock()
			t.connectStart = time.Now()
			t.mu.Unlock()
		},
		ConnectDone: func(_, _ string, err error) {
			t.mu.Lock()
			if err == nil && !t.connectStart.IsZero() {
				t.connect = time.Since(t.connectStart)
			}
			t.mu.Unlock()
		},
		TLSHandshakeStart: func() {
			t.mu.Lock()
			t.tlsStart = time.Now()
			t.mu.Unlock()
		},
		TLSHandshakeDone: func(st tls.ConnectionState, err error) {
			t.mu.Lock()
			t.tlsDur = time.Since(t.tlsStart)
			t.tlsErr = err
			t.tlsResumed = err == nil && st.DidResume
			if err == nil {
				t.tlsVersion = st.Version
			}
			t.mu.Unlock()
		},
		WroteHeaderField: func(string, []string) { t.markWriteStarted() },
		WroteHeaders:     t.markWriteStarted,
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			t.mu.Lock()
			t.wroteRequest = info.Err == nil
			t.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			t.mu.Lock()
			if t.ttfb == 0 {
				t.ttfb = time.Since(t.start)
			}
			t.mu.Unlock()
		},
	}
}

func (t *tracer) markWriteStarted() {
	t.mu.Lock()
	t.anyWriteStarted = true
	t.mu.Unlock()
}

// setProto records the response's protocol.
func (t *tracer) setProto(p string) {
	t.mu.Lock()
	t.proto = p
	t.mu.Unlock()
}

// newConn reports whether the last attempt's connection was a new one,
// dialed for it, not one from the idle pool. A connection whose handshake
// failed (no GotConn came: a TLS 1.2 server refuses a client certificate
// inside the handshake) was a new one too.
func (t *tracer) newConn() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.reused
}

// finish stamps the end of the call (once).
func (t *tracer) finish() {
	t.mu.Lock()
	if t.end.IsZero() {
		t.end = time.Now()
	}
	t.mu.Unlock()
}

// mayHaveLeft reports whether any byte of the request may have reached the
// server: whether ANY attempt of the call (net/http's own replays
// included) started to write it. Not only the last one: an HTTP/1.1
// attempt whose header went into the connection's buffer but whose flush
// wrote nothing (nothingWrittenError) looks, to httptrace, like one that
// wrote; and under Config.AllowTransportReplay an attempt that wrote can be
// followed by a replay that fails before writing. Both count as written
// (docs/outcomes.md).
func (t *tracer) mayHaveLeft() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.anyWriteStarted
}

// tlsHandshakeErr returns the error of a failed TLS handshake, or nil.
func (t *tracer) tlsHandshakeErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tlsErr
}

// snapshot returns the Trace so far.
func (t *tracer) snapshot() Trace {
	t.mu.Lock()
	defer t.mu.Unlock()
	end := t.end
	if end.IsZero() {
		end = time.Now()
	}
	tr := Trace{
		TotalMS:      ms(end.Sub(t.start)),
		TTFBMS:       ms(t.ttfb),
		Reused:       t.reused,
		TLSVersion:   TLSVersionName(t.tlsVersion),
		GotConns:     t.gotConns,
		WriteStarted: t.anyWriteStarted,
		WroteRequest: t.wroteRequest,
		Proto:        t.proto,
	}
	if !t.reused {
		tr.ConnectMS = ms(t.connect)
		tr.TLSHandshakeMS = ms(t.tlsDur)
		tr.TLSResumed = t.tlsResumed
	}
	return tr
}
