package vendorapi

import (
	"crypto/tls"
	"net/http"
	"sync"
)

var _ Strategy = (*PerRequest)(nil)

// PerRequest is the case's old engine: every call (the token call included)
// gets a new *http.Transport and *http.Client, so every call pays a TCP
// connect and a full TLS handshake, and the release func closes the
// connection afterwards. The lab caps its TLS at 1.2 through
// Config.MaxTLSVersion (PER_REQUEST_TLS: the old engine could not
// speak 1.3, which costs one more round trip per handshake).
//
// Keep-alive stays on in the transport (the request bytes are the same as
// the pooled mode's, without "Connection: close"); the connection goes idle
// when Client has read and closed the response body, and release closes it
// at once. On an error the transport has already closed it.
//
// Safe for concurrent use.
type PerRequest struct {
	cfg Config
	// name is "" (PerRequestName) or PerRequestResumeName; sessions is the
	// TLS session cache every transport shares (NewPerRequestResume), nil
	// for none: each connection pays a full handshake.
	name     string
	sessions tls.ClientSessionCache

	mu     sync.Mutex
	closed bool
	live   map[*http.Transport]struct{} // handed out, not yet released
}

// NewPerRequest returns the per-request strategy for cfg (zero fields take
// their defaults; IdleConnTimeout and MaxIdleConnsPerHost are not used).
func NewPerRequest(cfg Config) *PerRequest {
	return &PerRequest{cfg: cfg.withDefaults(), live: map[*http.Transport]struct{}{}}
}

// Name returns PerRequestName, or PerRequestResumeName for
// NewPerRequestResume's.
func (p *PerRequest) Name() string {
	if p.name != "" {
		return p.name
	}
	return PerRequestName
}

// Client returns a new client on a new transport. release closes the
// transport's connections (call it once the response body is closed; a
// second call does nothing). After Close it returns ErrClientClosed.
func (p *PerRequest) Client() (*http.Client, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, func() {}, ErrClientClosed
	}
	t := p.cfg.newTransport(false)
	if p.sessions != nil {
		t.TLSClientConfig.ClientSessionCache = p.sessions
	}
	p.live[t] = struct{}{}
	var once sync.Once
	release := func() {
		once.Do(func() {
			t.CloseIdleConnections()
			p.mu.Lock()
			delete(p.live, t)
			p.mu.Unlock()
		})
	}
	return p.cfg.newHTTPClient(t), release, nil
}

// Close makes later Client calls fail with ErrClientClosed and closes the
// idle connections of every transport not yet released. Safe to call twice;
// it always returns nil.
func (p *PerRequest) Close() error {
	p.mu.Lock()
	p.closed = true
	live := p.live
	p.live = map[*http.Transport]struct{}{}
	p.mu.Unlock()
	for t := range live {
		t.CloseIdleConnections()
	}
	return nil
}
