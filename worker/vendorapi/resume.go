package vendorapi

import (
	"crypto/tls"
)

// PerRequestResumeName is the per-request strategy with a shared TLS
// session cache (NewPerRequestResume); a value of the lab's MODES key.
const PerRequestResumeName = "per-request-resume"

// DefaultSessionCacheSize is the number of TLS sessions the
// per-request-resume strategy keeps (tls.NewLRUClientSessionCache's
// capacity). The worker talks to one vendor host, so one entry would do;
// a few spare ones cost nothing.
const DefaultSessionCacheSize = 8

// NewPerRequestResume returns the per-request strategy (a new
// *http.Transport and *http.Client for every call, connection closed
// after it) whose transports share one tls.ClientSessionCache of
// DefaultSessionCacheSize entries, so that every connection after the
// first offers the session the previous one was given and the vendor may
// resume it: an abbreviated TLS 1.2 handshake (1 round trip instead of 2)
// or a TLS 1.3 PSK handshake (still 1 round trip, no certificate sent or
// verified; no 0-RTT data, which Go's client never sends). Go's client
// resumes through session tickets only (RFC 5077 in TLS 1.2, PSK tickets
// in TLS 1.3), never by a TLS 1.2 session ID, so the server must issue
// tickets (nginx ssl_session_tickets on; docs/network.md, "TLS session
// resumption"). Name returns PerRequestResumeName.
func NewPerRequestResume(cfg Config) *PerRequest {
	p := NewPerRequest(cfg)
	p.name = PerRequestResumeName
	p.sessions = tls.NewLRUClientSessionCache(DefaultSessionCacheSize)
	return p
}
