package vendorapi

import (
	"net/http"
	"sync"
)

var _ Strategy = (*SharedClosing)(nil)

// SharedClosing is one *http.Client for the whole run whose engine still
// opens a new connection for every call: "sharing the client is not
// enough" (docs/studies.md#sharing-the-client-is-not-enough). It models the
// case's engine, Ktor CIO 2.3: its Endpoint.execute sends a request on a
// dedicated connection when pipelining is off (the default) or the method
// is neither GET nor HEAD, so every POST, and with the default config every
// call, connects, handshakes, and closes the socket when the call ends; it
// writes no "Connection: close" header (ktor-client-cio 2.3.0 and 2.3.13,
// jvmAndNix/.../Endpoint.kt execute and makeDedicatedRequest,
// EngineTasks.kt requiresDedicatedConnection, utils.kt writeHeaders).
//
// The Go equivalent is one shared transport with keep-alive on and
// MaxIdleConnsPerHost set negative: net/http's tryPutIdleConn refuses a
// connection when MaxIdleConnsPerHost < 0 (errKeepAlivesDisabled, Go
// 1.26 net/http/transport.go), so the client's read loop closes it once
// the response body is read, and the request bytes are the pooled mode's.
// DisableKeepAlives or Request.Close would close it as well but add
// "Connection: close" to every request, which the case's engine did not
// send (nginx then closes first, moving TIME_WAIT to the server).
//
// Safe for concurrent use.
type SharedClosing struct {
	transport *http.Transport
	client    *http.Client

	mu     sync.Mutex
	closed bool
}

// NewSharedClosing returns the shared-closing strategy for cfg (zero fields
// take their defaults; IdleConnTimeout and MaxIdleConnsPerHost are not
// used, MaxTLSVersion caps it as PER_REQUEST_TLS caps per-request: Ktor
// CIO 2.3's own TLS offers 1.2 only).
func NewSharedClosing(cfg Config) *SharedClosing {
	cfg = cfg.withDefaults()
	t := cfg.newTransport(false)
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = closeEveryConn
	return &SharedClosing{transport: t, client: cfg.newHTTPClient(t)}
}

// closeEveryConn is MaxIdleConnsPerHost of the shared-closing transport:
// negative, so net/http never pools a connection.
const closeEveryConn = -1

// Name returns SharedClosingName.
func (*SharedClosing) Name() string { return SharedClosingName }

// Client returns the shared client and a release func that does nothing
// (the transport closes the connection itself once the body is read).
// After Close it returns ErrClientClosed, so nothing is dialled.
func (s *SharedClosing) Client() (*http.Client, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, func() {}, ErrClientClosed
	}
	return s.client, func() {}, nil
}

// Close makes later Client calls fail with ErrClientClosed and closes
// whatever the transport holds. Safe to call twice; it always returns nil.
func (s *SharedClosing) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.transport.CloseIdleConnections()
	return nil
}
