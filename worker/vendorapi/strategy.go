package vendorapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"time"
)

// Strategy names, the values of Strategy.Name and the keys of Strategies.
// They are also the values of the lab's MODES key.
const (
	PerRequestName    = "per-request"
	PooledName        = "pooled"
	SharedClosingName = "shared-closing"
)

// Config is what every strategy is built from. Durations are wall time; a
// zero field takes the matching Default* value.
type Config struct {
	RootCAs       *x509.CertPool // verify the vendor against these; nil = system roots
	ServerName    string         // TLS SNI / verification name override; "" = URL host
	MinTLSVersion uint16         // 0 = tls.VersionTLS12
	MaxTLSVersion uint16         // 0 = highest supported (TLS 1.3)
	// Dial overrides how TCP connections are made (tests; mapping the
	// vendor host to a lab address). nil = net.Dialer{Timeout: DialTimeout}.
	// DialTimeout still bounds an override: it is called with a context
	// that expires after DialTimeout.
	Dial                func(ctx context.Context, network, addr string) (net.Conn, error)
	DialTimeout         time.Duration // default DefaultDialTimeout
	TLSHandshakeTimeout time.Duration // default DefaultTLSHandshakeTimeout
	// ResponseTimeout bounds one whole call, from dialling to the last
	// byte of the response body. It is applied as http.Client.Timeout on
	// every client a strategy hands out (not as a context deadline made by
	// Client), so whoever uses a Strategy directly gets the same bound.
	// When it fires after the request started to be written the send is
	// Unknown; before, NotSent. Default DefaultResponseTimeout.
	ResponseTimeout time.Duration
	// IdleConnTimeout is how long the pooled transport keeps an idle
	// keep-alive connection. It must sit below the vendor's keep-alive
	// timeout (nginx keepalive_timeout, 75 s by default) by at least one
	// RTT, or the client may reuse a connection the server is closing
	// (docs/case.md: 14-19 resets per 1,000 measured otherwise, 0 with the
	// client one RTT below). Pooled only; default DefaultIdleConnTimeout.
	IdleConnTimeout time.Duration
	// MaxIdleConnsPerHost sizes the pooled idle pool; size it for the
	// worker's concurrency. Pooled only; default 1 (concurrency 1, as in
	// the case).
	MaxIdleConnsPerHost int
	// MaxConnsPerHost caps the pooled transport's connections to the
	// vendor, dialling, in use and idle together; 0 = no cap. Set it to
	// the sends in flight: without it, a send that waits for a connection
	// dials one while another frees up, and the spare one stays (Go's
	// transport), so N in flight can open more than N. Pooled only.
	MaxConnsPerHost int
	// HTTPVersion is HTTP1 (the default, the case's) or HTTP2: the
	// transport then offers h2 and http/1.1 through ALPN and speaks h2
	// when the server picks it (nginx "http2"; docs/studies.md, study C).
	// Plain http:// URLs stay HTTP/1.1 (no h2c).
	HTTPVersion HTTPVersion
	// ClientCertificates are presented when the server asks for one
	// (mutual TLS); nil = none. A server that requires one and gets none
	// refuses the handshake, and the send is NotSent (classifyTransport).
	ClientCertificates []tls.Certificate
	// AllowTransportReplay, for the negative control only, gives the
	// transport back its stock replays: an HTTP/2 POST whose stream the
	// server reset with PROTOCOL_ERROR after reading it is sent again on a
	// new connection, and an HTTP/1.1 POST carrying Idempotency-Key or
	// X-Idempotency-Key is sent again after it was written. Either may
	// reach the vendor twice (docs/outcomes.md#http2). false, the default,
	// refuses every replay of a request that may have been processed
	// (replayGuard) and keeps the safe ones.
	AllowTransportReplay bool
}

// HTTPVersion is the HTTP version a strategy's transport offers.
type HTTPVersion int

// HTTP versions of Config.HTTPVersion.
const (
	HTTP1 HTTPVersion = iota // HTTP/1.1 only (ALPN http/1.1)
	HTTP2                    // h2 through ALPN, HTTP/1.1 as fallback
)

// String returns "1.1" or "2".
func (v HTTPVersion) String() string {
	if v == HTTP2 {
		return "2"
	}
	return "1.1"
}

// Defaults for Config. DefaultIdleConnTimeout sits below nginx's default
// keepalive_timeout (75 s) by far more than one RTT (docs/environment.md: Go's own
// default of 90 s sits above it).
const (
	DefaultDialTimeout         = 3 * time.Second
	DefaultTLSHandshakeTimeout = 3 * time.Second
	DefaultResponseTimeout     = 10 * time.Second
	DefaultIdleConnTimeout     = 60 * time.Second
	// DefaultMaxIdleConnsPerHost is one idle connection: the worker sends
	// with concurrency 1.
	DefaultMaxIdleConnsPerHost = 1
	// DefaultMinTLSVersion is the lowest TLS version offered.
	DefaultMinTLSVersion = tls.VersionTLS12
)

// TLSVersionName returns "TLS 1.2" / "TLS 1.3" / "" for 0.
func TLSVersionName(v uint16) string {
	if v == 0 {
		return ""
	}
	return tls.VersionName(v)
}

// Strategy hands out the *http.Client used for one call (a token call or a
// send). Implementations: *PerRequest, *Pooled, *SharedClosing.
type Strategy interface {
	// Name is PerRequestName, PerRequestResumeName, PooledName or SharedClosingName.
	Name() string
	// Client returns the client for one call and a release func to call
	// once the response body is closed. After Close it returns
	// ErrClientClosed and dials nothing.
	Client() (*http.Client, func(), error)
	// Close releases all connections. Safe to call twice.
	Close() error
}

// Strategies returns the constructors by name (a fresh map on every call:
// there is no global registry to mutate). Keys are PerRequestName,
// PerRequestResumeName, PooledName and SharedClosingName.
func Strategies() map[string]func(Config) Strategy {
	return map[string]func(Config) Strategy{
		PerRequestName:       func(c Config) Strategy { return NewPerRequest(c) },
		PerRequestResumeName: func(c Config) Strategy { return NewPerRequestResume(c) },
		PooledName:           func(c Config) Strategy { return NewPooled(c) },
		SharedClosingName:    func(c Config) Strategy { return NewSharedClosing(c) },
	}
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.TLSHandshakeTimeout <= 0 {
		c.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	if c.ResponseTimeout <= 0 {
		c.ResponseTimeout = DefaultResponseTimeout
	}
	if c.IdleConnTimeout <= 0 {
		c.IdleConnTimeout = DefaultIdleConnTimeout
	}
	if c.MaxIdleConnsPerHost <= 0 {
		c.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	if c.MinTLSVersion == 0 {
		c.MinTLSVersion = DefaultMinTLSVersion
	}
	return c
}

// tlsConfig is the client TLS policy shared by both strategies: the chain
// is always verified against RootCAs (InsecureSkipVerify is never set), the
// version range is [MinTLSVersion, MaxTLSVersion], ALPN offers http/1.1
// (h2 first with HTTP2), ClientCertificates are presented when asked for,
// and no session cache is set (each new connection pays a full handshake,
// as in the case; nginx has its session cache off as well). The
// per-request-resume strategy adds its shared cache to each transport's
// copy (NewPerRequestResume).
func (c Config) tlsConfig() *tls.Config {
	protos := []string{"http/1.1"}
	if c.HTTPVersion == HTTP2 {
		protos = []string{"h2", "http/1.1"}
	}
	return &tls.Config{
		RootCAs:      c.RootCAs,
		ServerName:   c.ServerName,
		MinVersion:   c.MinTLSVersion,
		MaxVersion:   c.MaxTLSVersion,
		NextProtos:   protos,
		Certificates: c.ClientCertificates,
	}
}

// dialContext returns the transport's DialContext: Config.Dial bounded by
// DialTimeout, or a net.Dialer with that timeout.
func (c Config) dialContext() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if c.Dial == nil {
		d := &net.Dialer{Timeout: c.DialTimeout, KeepAlive: 30 * time.Second}
		return d.DialContext
	}
	dial, timeout := c.Dial, c.DialTimeout
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return dial(ctx, network, addr)
	}
}

// newTransport builds the transport for c. pooled false is not used to
// disable keep-alive on the wire (the per-request strategy closes its
// connections itself, so the request bytes are the same in both modes); it
// only sizes the idle pool.
//
// With HTTP1 (the case's engine spoke HTTP/1.1), HTTP/2 is off three ways,
// any one of which suffices: TLSNextProto is a non-nil empty map (the
// documented switch), ForceAttemptHTTP2 is false, and Protocols holds
// HTTP/1 only. With HTTP2, Protocols holds both, ForceAttemptHTTP2 is set
// (a custom TLSClientConfig and DialContext would otherwise turn h2 off)
// and net/http's bundled h2 client multiplexes every call on one
// connection per host.
//
// Proxy is nil on purpose: the lab's traffic goes only to loopback and the
// run's Docker network, never through an HTTPS_PROXY from the environment.
func (c Config) newTransport(pooled bool) *http.Transport {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	nextProto := map[string]func(string, *tls.Conn) http.RoundTripper{}
	if c.HTTPVersion == HTTP2 {
		protocols.SetHTTP2(true)
		nextProto = nil
	}
	t := &http.Transport{
		Proxy:               nil,
		DialContext:         c.dialContext(),
		TLSClientConfig:     c.tlsConfig(),
		TLSHandshakeTimeout: c.TLSHandshakeTimeout,
		TLSNextProto:        nextProto,
		ForceAttemptHTTP2:   c.HTTPVersion == HTTP2,
		Protocols:           protocols,
		MaxIdleConns:        1,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     c.IdleConnTimeout,
	}
	if pooled {
		t.MaxIdleConns = c.MaxIdleConnsPerHost
		t.MaxIdleConnsPerHost = c.MaxIdleConnsPerHost
		t.MaxConnsPerHost = c.MaxConnsPerHost
	}
	return t
}

// newHTTPClient wraps t (guarded, see guardTransport): ResponseTimeout as the whole-call timeout, and
// redirects are never followed. Following a 307/308 would re-send the POST
// body to another URL, a second send the vendor does not de-duplicate; the
// 3xx is returned to Client, which classifies it Unknown.
func (c Config) newHTTPClient(t *http.Transport) *http.Client {
	return &http.Client{
		Transport: c.guardTransport(t),
		Timeout:   c.ResponseTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// errNoStrategy is returned (inside a NotSent *SendError) by a Client built
// with a nil Strategy.
var errNoStrategy = errors.New("no client strategy")
