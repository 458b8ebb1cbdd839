package vendorapi

import (
	"net/http"
	"sync"
)

var _ Strategy = (*Pooled)(nil)

// Pooled is the case's fix: one shared *http.Client on one keep-alive
// transport for the token call and every send. At concurrency 1 every call
// after the first reuses one TCP connection and its TLS session (the case:
// 1 connection for 1,050 sends), until the vendor closes it (nginx
// keepalive_requests, 1,000 by default) or it idles for
// Config.IdleConnTimeout.
//
// Safe for concurrent use.
type Pooled struct {
	transport *http.Transport
	client    *http.Client

	mu     sync.Mutex
	closed bool
}

// NewPooled returns the pooled strategy for cfg (zero fields take their
// defaults): idle pool of MaxIdleConnsPerHost connections, each kept for
// IdleConnTimeout.
func NewPooled(cfg Config) *Pooled {
	cfg = cfg.withDefaults()
	t := cfg.newTransport(true)
	return &Pooled{transport: t, client: cfg.newHTTPClient(t)}
}

// Name returns PooledName.
func (*Pooled) Name() string { return PooledName }

// Client returns the shared client and a release func that does nothing
// (the connection goes back to the idle pool when the body is closed).
// After Close it returns ErrClientClosed, so nothing is dialled.
func (p *Pooled) Client() (*http.Client, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, func() {}, ErrClientClosed
	}
	return p.client, func() {}, nil
}

// Close makes later Client calls fail with ErrClientClosed and closes the
// idle connections. A call in flight keeps its connection until it ends;
// the transport then closes it instead of pooling it (net/http:
// CloseIdleConnections closes connections that become idle afterwards).
// Safe to call twice; it always returns nil.
func (p *Pooled) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.transport.CloseIdleConnections()
	return nil
}
