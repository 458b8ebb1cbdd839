// Package vendor is the worker's HTTP client for the messaging vendor: the
// token call, the send call, the client strategies (per-request, pooled, shared-closing), the
// per-send httptrace timings, and the classification of every failure into
// the delivery classes of docs/outcomes.md (SENT, REJECTED, NOT_SENT, UNKNOWN).
//
// # Data flow
//
//	message.Notification
//	      |
//	      v
//	Client.Send --token cached?--no--> POST /v1/token (Basic auth) --+
//	      |                                                          |
//	      v                                                          v
//	Strategy.Client()  per-request: new Transport + Client per call, closed by release
//	      |            pooled:      one keep-alive Transport for token and sends
//	      |            shared-closing: one Transport that closes every connection
//	      v
//	POST /v3/message (Bearer, X-Refkey) --httptrace--> tracer (timings, reuse,
//	      |                                            TLS version, write started)
//	      v
//	response / error --judge / classifyTransport--> Result + *SendError{Class, Reason, Code}
//
// # Vendor API
//
// The shape below is DefaultAPI, the alimtalk profile's
// (docs/vendor-api.md); WithAPI sets another vendor's paths, token
// authentication, refkey field and code field
// (docs/worker-contract.md#what-the-lab-gives-the-worker).
//
// POST /v1/token with HTTP Basic auth answers
// {"accesstoken": "...", "type": "Bearer", "expired": "<RFC 3339>"}; with
// TokenAuthForm the call is an OAuth2 client-credentials grant (a
// form-encoded body grant_type=client_credentials&client_id=...&client_secret=...)
// and the answer may be {"access_token": "...", "token_type": "Bearer",
// "expires_in": <seconds>}; either answer shape is accepted with either
// authentication. The token is cached until DefaultTokenRefreshMargin
// before it expires, and fetched again once on a 401 from a send (then the
// send is retried once). A caller's check (WithBeforePost) runs right
// before each POST /v3/message, after any token call: the worker's send
// window for ads, which a slow token call may cross.
//
// POST /v3/message carries Authorization: Bearer <token>, Content-Type:
// application/json, the correlation header X-Refkey: <refkey> (nginx logs
// it), and the body
//
//	{"refkey": "...", "recipient": "...", "template_code": "...", "text": "...", "category": "info"}
//
// (API.RefKeyField names the first key) and answers {"code": "1000",
// "description": "success", "refkey": "...", "messagekey": "..."}
// (API.CodeField names the code's key). The status table's success code
// ("1000" by default, SuccessCode) is SENT; any other code is REJECTED with
// that code unless the table maps it.
//
// # Classification
//
// Whether a failed send may have reached the vendor is decided by
// httptrace, not by the error's text: WroteHeaderField fires when the first
// header line goes into the connection's write buffer, after the request
// line and before any byte can reach the socket (net/http request.go,
// Request.write). If it never fired on any attempt, not one
// byte left the worker and the send is NOT_SENT, whatever the error (dial,
// DNS, TLS handshake, closed client, canceled before writing). If it fired
// for any attempt (the transport's own replays included), the send is
// UNKNOWN, whatever the error (reset, EOF, response timeout, canceled).
// Typed errors (errors.Is / errors.As on *net.DNSError, *net.OpError,
// tls.RecordHeaderError, *tls.CertificateVerificationError, x509 errors,
// syscall.ECONNRESET, io.EOF, context.DeadlineExceeded, net.Error Timeout)
// only set SendError.Reason. A response decides by status: 2xx with code
// "1000" SENT, 2xx with another code REJECTED, 2xx with an unparsable body
// UNKNOWN, 4xx REJECTED, 5xx UNKNOWN (502/504 come from a proxy that cannot
// know whether the vendor processed the request; 500/503 are UNKNOWN too,
// the conservative choice, since a vendor may fail after storing the
// message), 1xx/3xx UNKNOWN. Redirects are never followed (a 307/308 would
// re-send the POST body).
//
// # When Go replays a POST by itself
//
// From net/http transport.go (Go 1.26): Transport.roundTrip retries a
// failed request on another connection when persistConn.shouldRetryRequest
// says so (HTTP/2's no-cached-connection case aside: HTTP/2 is off unless
// Config.HTTPVersion is HTTP2).
// It never retries on a fresh connection (pc.isReused() false: "the server
// is just hanging up on us"). On a reused connection it retries in exactly
// two cases:
//
//   - nothingWrittenError: the write loop failed having written zero bytes
//     to the connection (pc.nwrite unchanged), or the read loop's first-byte
//     peek failed, or the connection broke, before any byte was written
//     (persistConn.mapRoundTripError). A POST is then retried if it has no
//     body or its body can be rewound (Request.GetBody, which
//     http.NewRequest sets for a *bytes.Reader, as here). Safe: nothing
//     reached the server.
//   - a replayable request (Request.isReplayable: GET, HEAD, OPTIONS, TRACE,
//     or any method with a header Idempotency-Key or X-Idempotency-Key, and
//     a rewindable body) that failed with a transportReadFromServerError
//     (the peek for the first response byte failed, typically io.EOF or
//     ECONNRESET: the server closed the connection as the request went out)
//     or errServerClosedIdle (the server's FIN arrived while the connection
//     looked idle). Here the request WAS written and may have been
//     processed.
//
// Both cases and the HTTP/2 ones (REFUSED_STREAM, a stream above a
// GOAWAY's last-stream-id, RST_STREAM(PROTOCOL_ERROR)) are held to one
// rule by every strategy's RoundTripper (replayGuard, replay.go;
// docs/outcomes.md#automatic-replays): a request that may have been
// processed is never sent again, a request that provably was not may be.
// The idempotency headers are hidden from net/http's replay rule, and an
// HTTP/2 replay after a PROTOCOL_ERROR reset is refused (ErrReplayRefused,
// Unknown). Config.AllowTransportReplay turns the guard off, for the
// negative control only. This package still never sends Idempotency-Key
// or X-Idempotency-Key unless WithIdempotencyHeader names one, and
// WithCorrelationHeader refuses those names. Trace.GotConns > 1 shows a
// replay; the tracer never resets its "write started" flag, so a send is
// Unknown if ANY attempt started to write (tracer.mayHaveLeft).
//
// Without those headers, a POST on a reused connection that the server
// closes after reading it fails with io.EOF (the error inside
// transportReadFromServerError) and is UNKNOWN. One whose connection the
// server closed as it was being picked from the pool fails with
// errServerClosedIdle ("http: server closed idle connection"): NOT_SENT
// when the trace shows the write never started, UNKNOWN when it started
// (the FIN may have crossed request bytes in flight; Go's own comment on
// errServerClosedIdle says so). A connection whose FIN the transport saw
// while it sat idle is dropped from the pool and never used.
//
// # Timeouts
//
// Config.ResponseTimeout is http.Client.Timeout on every client a strategy
// hands out: it bounds the whole call, dial to last body byte, for Client
// and for anyone using a Strategy directly. Its error satisfies
// errors.Is(err, context.DeadlineExceeded) (net/http timeoutError.Is). A
// caller's context deadline works the same way. DialTimeout and
// TLSHandshakeTimeout bound the connection setup inside it.
//
// # Secrets
//
// Nothing here logs. Error strings never contain the client secret, the
// token, the recipient or the vendor's description text;
// Credentials.String, Credentials.GoString and Client.String redact.
package vendorapi
